package io.quarkiverse.idempotency;

import java.time.Duration;

/**
 * The handler failed (it threw, or its transaction rolled back) and the key's attempt budget is not spent: the
 * attempt was counted in the store and the message is redelivered after {@link #retryDelay()}. The handler's own
 * exception is the cause.
 */
public final class HandlerFailedException extends IdempotencyException {

    private final int attempt;
    private final int maxAttempts;

    public HandlerFailedException(ScopedKey key, int attempt, int maxAttempts, Duration retryDelay, Throwable cause) {
        super("Attempt " + attempt + " of " + maxAttempts + " for key '" + key + "' failed; retrying in "
                + retryDelay.toMillis() + " ms: " + cause, key, cause, retryDelay);
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
    }

    /** @return which attempt failed, counting from 1 */
    public int attempt() {
        return attempt;
    }

    /** @return the attempt budget */
    public int maxAttempts() {
        return maxAttempts;
    }
}
