package io.quarkiverse.idempotency.deployment.exception;

/**
 * An {@code @Idempotent} key function that cannot be used for the method's payload.
 */
public final class KeyFunctionException extends IdempotencyDefinitionException {

    public KeyFunctionException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
