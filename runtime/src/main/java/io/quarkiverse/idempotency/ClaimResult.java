package io.quarkiverse.idempotency;

/**
 * The store's answer to a claim.
 */
public enum ClaimResult {
    /** The key was free (never seen, or its last attempt failed): this delivery now holds it and runs the handler. */
    NEW,
    /** A claim whose lease ran out (its owner died) was taken over; handled like {@link #NEW}. */
    TAKEN_OVER,
    /** The key is confirmed: the message was handled, the delivery is a duplicate. */
    DONE,
    /** Another delivery holds the key: it is being handled right now, retry later. */
    BUSY;

    /** @return whether this delivery holds the claim and must run the handler */
    public boolean claimed() {
        return this == NEW || this == TAKEN_OVER;
    }
}
