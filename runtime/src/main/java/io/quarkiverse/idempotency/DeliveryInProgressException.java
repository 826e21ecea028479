package io.quarkiverse.idempotency;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * Another delivery of the same key is being handled. The message is redelivered later; it is never acknowledged (the
 * first attempt may still fail) and never dead-lettered.
 */
public final class DeliveryInProgressException extends IdempotencyException {

    private final transient CompletionStage<Void> holderEnded;

    public DeliveryInProgressException(ScopedKey key) {
        this(key, null);
    }

    /**
     * @param retryDelay how long to wait before redelivering (the other delivery's remaining lease), or {@code null}
     *        for the configured requeue delay
     */
    public DeliveryInProgressException(ScopedKey key, Duration retryDelay) {
        this(key, retryDelay, null);
    }

    /**
     * @param retryDelay how long to wait at most before redelivering, or {@code null} for the configured requeue delay
     * @param holderEnded when the delivery holding the key runs in this process: completes once it ended, so that
     *        the message comes back then rather than after the whole delay; else {@code null}
     */
    public DeliveryInProgressException(ScopedKey key, Duration retryDelay, CompletionStage<Void> holderEnded) {
        super("Another delivery of key '" + key + "' is being handled; retrying later", key, null, retryDelay);
        this.holderEnded = holderEnded;
    }

    /**
     * @return completes once the delivery of this process that holds the key ended; {@code null} when the holder is
     *         elsewhere (or not known)
     */
    public CompletionStage<Void> holderEnded() {
        return holderEnded;
    }
}
