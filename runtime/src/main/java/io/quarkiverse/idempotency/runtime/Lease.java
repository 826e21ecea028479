package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.IdempotencyStore.HeldClaim;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * A lease-mode claim a running handler holds, as the {@link LeaseRenewer} keeps it: when it was claimed and last
 * renewed, by this process's clock.
 */
final class Lease {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(Lease.class);

    private final ScopedKey key;
    private final String token;
    private final Duration duration;
    private final Duration retention;
    private final long claimedAt;
    private volatile long renewedAt;
    private boolean lapseReported;

    Lease(ScopedKey key, String token, Duration duration, Duration retention) {
        this.key = key;
        this.token = token;
        this.duration = duration;
        this.retention = retention;
        this.claimedAt = System.nanoTime();
        this.renewedAt = claimedAt;
    }

    ScopedKey key() {
        return key;
    }

    /** @return the claim as the store renews it */
    HeldClaim held() {
        return new HeldClaim(key, token, duration);
    }

    /**
     * @return whether it was held for longer than the key's retention: a delivery that never ends must not hold its key
     *         for ever
     */
    boolean outlived(long now) {
        return now - claimedAt >= retention.toNanos();
    }

    /** @return whether a third of its duration has passed since it was last renewed */
    boolean renewalDue(long now) {
        return now - renewedAt >= duration.toNanos() / 3;
    }

    void renewedAt(long nanos) {
        this.renewedAt = nanos;
    }

    /**
     * @return whether the lease may have run out: it was not renewed within its duration (the store was unreachable, or
     *         the renewal could not run). Another delivery may have taken the claim over; the confirm, fenced by the
     *         token, finds out.
     */
    boolean lapsed() {
        return System.nanoTime() - renewedAt > duration.toNanos();
    }

    /**
     * Says, once, that the lease lapsed: told by the renewer when it finds out, or by the delivery before it confirms,
     * whichever comes first.
     */
    synchronized void reportIfLapsed() {
        if (!lapseReported && lapsed()) {
            lapseReported = true;
            LOG.leaseLapsed(key, duration.toSeconds());
        }
    }
}
