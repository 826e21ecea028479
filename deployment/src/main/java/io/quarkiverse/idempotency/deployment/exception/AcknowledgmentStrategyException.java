package io.quarkiverse.idempotency.deployment.exception;

/**
 * {@code @Idempotent} on a method whose acknowledgment strategy acks before the outcome is known.
 */
public final class AcknowledgmentStrategyException extends IdempotencyDefinitionException {

    public AcknowledgmentStrategyException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
