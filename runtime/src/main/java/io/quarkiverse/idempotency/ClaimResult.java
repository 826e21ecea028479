package io.quarkiverse.idempotency;

/**
 * The store's answer to a claim.
 */
public enum ClaimResult {
    /** The key was free (never seen, or its last attempt failed): this delivery now holds it and runs the handler. */
    NEW,
    /**
     * A claim whose lease ran out (its owner died or stalled) was taken over: this delivery now holds it. The lost
     * attempt is the delivery's to count before the handler runs again.
     */
    TAKEN_OVER,
    /** The key is confirmed: the message was handled, the delivery is a duplicate. */
    DONE,
    /** Another delivery holds the key: it is being handled right now, retry later. */
    BUSY,
    /**
     * The key's attempt budget was spent and its message dead-lettered: this delivery is dead-lettered again at once,
     * with the recorded reason, and gets no new budget.
     */
    DEAD_LETTERED,
    /**
     * Only from {@link IdempotencyStore#claimInTransaction}: a claim whose lease ran out holds the key. It is taken
     * over on a lease ({@link IdempotencyStore#claim}), outside the handler's transaction, so that the lost attempt is
     * counted durably whatever the transaction does.
     */
    EXPIRED;

    /** @return whether this delivery holds the claim and must run the handler */
    public boolean claimed() {
        return this == NEW || this == TAKEN_OVER;
    }
}
