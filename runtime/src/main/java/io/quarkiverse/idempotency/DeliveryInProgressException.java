package io.quarkiverse.idempotency;

import java.time.Duration;

/**
 * Another delivery of the same key is being handled. The message is redelivered later; it is never acknowledged (the
 * first attempt may still fail) and never dead-lettered.
 */
public final class DeliveryInProgressException extends IdempotencyException {

    private final Duration retryDelay;

    public DeliveryInProgressException(ScopedKey key) {
        this(key, null);
    }

    /**
     * @param retryDelay how long to wait before redelivering (the other delivery's remaining lease), or {@code null}
     *        for the configured requeue delay
     */
    public DeliveryInProgressException(ScopedKey key, Duration retryDelay) {
        super("Another delivery of key '" + key + "' is being handled; retrying later", key, null);
        this.retryDelay = retryDelay;
    }

    @Override
    public boolean requeue() {
        return true;
    }

    @Override
    public Duration retryDelay() {
        return retryDelay;
    }
}
