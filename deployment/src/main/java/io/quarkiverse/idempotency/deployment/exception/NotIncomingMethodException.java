package io.quarkiverse.idempotency.deployment.exception;

/**
 * {@code @Idempotent} on a method without {@code @Incoming}, or on a class.
 */
public final class NotIncomingMethodException extends IdempotencyDefinitionException {

    public NotIncomingMethodException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
