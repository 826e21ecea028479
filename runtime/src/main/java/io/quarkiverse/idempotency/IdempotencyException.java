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
    private final boolean requeue;
    private final Duration retryDelay;

    /**
     * @param requeue {@code true} when the message is redelivered after the configured requeue delay, {@code false}
     *        when it is dead-lettered
     */
    protected IdempotencyException(String message, ScopedKey key, Throwable cause, boolean requeue) {
        this(message, key, cause, requeue, null);
    }

    /**
     * An outcome whose message is redelivered.
     *
     * @param retryDelay how long the message waits before it is redelivered, or {@code null} for the configured
     *        requeue delay
     */
    protected IdempotencyException(String message, ScopedKey key, Throwable cause, Duration retryDelay) {
        this(message, key, cause, true, retryDelay);
    }

    private IdempotencyException(String message, ScopedKey key, Throwable cause, boolean requeue, Duration retryDelay) {
        super(message, cause, false, false);
        this.key = key;
        this.requeue = requeue;
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
    public boolean requeue() {
        return requeue;
    }

    /**
     * @return how long the message waits before it is redelivered; {@code null} for
     *         {@code quarkus.idempotency.requeue-delay}
     */
    public Duration retryDelay() {
        return retryDelay;
    }
}
