package io.quarkiverse.idempotency.deployment.exception;

/**
 * An {@code @Idempotent} method consumes a channel whose connector the extension cannot map its outcomes for.
 */
public final class UnsupportedConnectorException extends IdempotencyDefinitionException {

    public UnsupportedConnectorException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
