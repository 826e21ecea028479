package io.quarkiverse.idempotency.deployment.exception;

/**
 * {@code @Idempotent} on a method that consumes or produces a stream, which has no per-message outcome.
 */
public final class StreamSignatureException extends IdempotencyDefinitionException {

    public StreamSignatureException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
