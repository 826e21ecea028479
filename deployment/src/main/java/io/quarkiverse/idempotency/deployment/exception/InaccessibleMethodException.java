package io.quarkiverse.idempotency.deployment.exception;

/**
 * {@code @Idempotent} on a private or static method, which cannot be intercepted.
 */
public final class InaccessibleMethodException extends IdempotencyDefinitionException {

    public InaccessibleMethodException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
