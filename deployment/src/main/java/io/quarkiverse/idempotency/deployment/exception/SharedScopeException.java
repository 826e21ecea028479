package io.quarkiverse.idempotency.deployment.exception;

/**
 * Two {@code @Idempotent} methods consuming the same channel under the same scope.
 */
public final class SharedScopeException extends IdempotencyDefinitionException {

    public SharedScopeException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
