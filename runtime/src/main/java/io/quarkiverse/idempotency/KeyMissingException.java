package io.quarkiverse.idempotency;

/**
 * The key function found no key in the message (or failed). The message is rejected without requeue, so it lands in
 * the dead-letter queue: the same function would find no key in it next time either.
 */
public final class KeyMissingException extends IdempotencyException {

    public KeyMissingException(String message, Throwable cause) {
        super(message, null, cause, false);
    }
}
