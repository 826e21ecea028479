package io.quarkiverse.idempotency.deployment.exception;

/**
 * A database table name that is not a plain, optionally schema-qualified, SQL identifier.
 */
public final class InvalidTableNameException extends IdempotencyDefinitionException {

    public InvalidTableNameException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
