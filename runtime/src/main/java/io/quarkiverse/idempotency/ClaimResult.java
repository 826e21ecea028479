package io.quarkiverse.idempotency;

/**
 * The store's answer to a claim.
 */
public enum ClaimResult {
    /** The key was free: this worker now holds a claim on it and must run the handler, then confirm or forget. */
    NEW,
    /** A stale claim (older than the claim timeout: its owner died) was taken over; handled like {@link #NEW}. */
    TAKEN_OVER,
    /** The key is confirmed: the message was handled, the delivery is a duplicate. */
    DONE,
    /** A live claim of another delivery holds the key: it is being handled right now, retry later. */
    BUSY;

    /** @return whether this worker holds the claim and must run the handler */
    public boolean claimed() {
        return this == NEW || this == TAKEN_OVER;
    }
}
