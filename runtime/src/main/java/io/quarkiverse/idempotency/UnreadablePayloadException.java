package io.quarkiverse.idempotency;

/**
 * The message never reached the {@code @Idempotent} method: its payload could not be converted to the method's
 * parameter type (not JSON, a JSON array for an object, a wrong type). Retrying cannot help, so the message is
 * dead-lettered at once. The conversion's exception is the cause.
 */
public final class UnreadablePayloadException extends IdempotencyException {

    public UnreadablePayloadException(String message, Throwable cause) {
        super(message, null, cause, false);
    }
}
