package io.quarkiverse.idempotency;

/**
 * An attempt that never finished: the process handling it died or stalled past its lease, and another delivery took
 * its claim over. It counts as a failed attempt, so that a message that kills its process is dead-lettered within its
 * budget instead of being taken over for ever; this is then the dead letter's cause.
 */
public final class LeaseExpiredException extends RuntimeException {

    public LeaseExpiredException(ScopedKey key) {
        super("The previous attempt of key '" + key + "' never finished: the process handling it died or stalled past"
                + " its lease, and the claim was taken over", null, false, false);
    }
}
