package io.quarkiverse.idempotency;

/**
 * Why an idempotent delivery was not acknowledged. The extension nacks the message with a subtype of this exception;
 * the RabbitMQ failure handler it installs reads {@link #requeue()} to decide between requeue and dead-letter.
 * <p>
 * These exceptions describe outcomes, not bugs: they carry no stack trace.
 */
public abstract class IdempotencyException extends RuntimeException {

    private final ScopedKey key;

    protected IdempotencyException(String message, ScopedKey key, Throwable cause) {
        super(message, cause, false, false);
        this.key = key;
    }

    /**
     * @return the key concerned, or {@code null} when it could not be computed
     */
    public ScopedKey key() {
        return key;
    }

    /**
     * @return {@code true} when the message must be redelivered later (after the configured retry delay);
     *         {@code false} when it must be rejected without requeue
     */
    public abstract boolean requeue();
}
