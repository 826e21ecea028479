package io.quarkiverse.idempotency.deployment.exception;

/**
 * {@code @Idempotent} on a method that would run blocking store calls on the event loop.
 */
public final class EventLoopException extends IdempotencyDefinitionException {

    public EventLoopException(String what, String location, String remedy) {
        super(what, location, remedy);
    }
}
