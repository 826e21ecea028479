package io.quarkiverse.idempotency;

/**
 * The handler failed on the last attempt of the key's budget: the message is dead-lettered and the key's record
 * marked so. The last attempt's exception is the cause. A later delivery of the key (a replay from the dead-letter
 * queue) starts a fresh budget.
 */
public final class AttemptsExhaustedException extends IdempotencyException {

    private final int attempts;

    public AttemptsExhaustedException(ScopedKey key, int attempts, Throwable cause) {
        super("All " + attempts + " attempts for key '" + key + "' failed; dead-lettered. Last failure: " + cause, key,
                cause, false);
        this.attempts = attempts;
    }

    /** @return how many attempts failed */
    public int attempts() {
        return attempts;
    }
}
