package io.quarkiverse.idempotency.deployment.exception;

/**
 * A store selection the application cannot support (the database store without Hibernate ORM).
 */
public final class StoreConfigurationException extends IdempotencyDefinitionException {

    public StoreConfigurationException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
