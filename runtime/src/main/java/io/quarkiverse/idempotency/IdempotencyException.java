package io.quarkiverse.idempotency;

import java.time.Duration;

/**
 * Why an idempotent delivery was not acknowledged. The extension nacks the message with a subtype of this exception;
 * the failure handler it installs for the channel reads {@link #requeue()} and {@link #retryDelay()} to decide between
 * a delayed redelivery and the dead-letter queue.
 * <p>
 * These exceptions describe outcomes, not bugs: they carry no stack trace of their own (a handler's failure is their
 * cause).
 */
public abstract class IdempotencyException extends RuntimeException {

    private final ScopedKey key;
    private final Duration retryDelay;

    protected IdempotencyException(String message, ScopedKey key, Throwable cause) {
        this(message, key, cause, null);
    }

    /**
     * @param retryDelay how long the message waits before it is redelivered, or {@code null} for the configured
     *        requeue delay
     */
    protected IdempotencyException(String message, ScopedKey key, Throwable cause, Duration retryDelay) {
        super(message, cause, false, false);
        this.key = key;
        this.retryDelay = retryDelay;
    }

    /**
     * @return the key concerned, or {@code null} when it could not be computed
     */
    public ScopedKey key() {
        return key;
    }

    /**
     * @return {@code true} when the message must be redelivered later (after {@link #retryDelay()}); {@code false}
     *         when it must be dead-lettered (rejected without requeue)
     */
    public abstract boolean requeue();

    /**
     * @return how long the message waits before it is redelivered; {@code null} for
     *         {@code quarkus.idempotency.requeue-delay}
     */
    public Duration retryDelay() {
        return retryDelay;
    }
}
