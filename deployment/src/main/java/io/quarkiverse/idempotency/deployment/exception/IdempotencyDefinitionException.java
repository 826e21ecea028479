package io.quarkiverse.idempotency.deployment.exception;

import jakarta.enterprise.inject.spi.DeploymentException;

/**
 * A misuse of the idempotency extension found at build time. Each rule has its own subtype, so that tests and tools
 * can tell them apart; the message states what is wrong, where, and the remedy.
 */
public abstract class IdempotencyDefinitionException extends DeploymentException {

    private final String location;

    protected IdempotencyDefinitionException(String what, String location, String remedy) {
        super(what + (location == null ? "" : " [" + location + "]") + "; " + remedy);
        this.location = location;
    }

    /** @return where the problem is ({@code class=..., method=...} or a configuration property) */
    public String location() {
        return location;
    }
}
