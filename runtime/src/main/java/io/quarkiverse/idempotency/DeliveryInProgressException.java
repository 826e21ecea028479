package io.quarkiverse.idempotency;

/**
 * Another delivery of the same key holds a live claim: its handler is running. The message is redelivered later; it
 * is never acknowledged (the first attempt may still fail) and never dead-lettered.
 */
public final class DeliveryInProgressException extends IdempotencyException {

    public DeliveryInProgressException(ScopedKey key) {
        super("Another delivery of key '" + key + "' is being handled; retrying later", key, null);
    }

    @Override
    public boolean requeue() {
        return true;
    }
}
