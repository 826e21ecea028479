package io.quarkiverse.idempotency.deployment.exception;

/**
 * {@code @Idempotent} on a method shape the extension does not support (a transactional asynchronous method, a {@code Message}
 * method that does not return a stage).
 */
public final class UnsupportedSignatureException extends IdempotencyDefinitionException {

    public UnsupportedSignatureException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
