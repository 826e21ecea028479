package io.quarkiverse.idempotency.deployment.exception;

/**
 * An {@code @Idempotent} retention or claim timeout that is not a duration.
 */
public final class InvalidDurationException extends IdempotencyDefinitionException {

    public InvalidDurationException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
