package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.ScopedKey;

/**
 * A lease-mode claim a running handler holds, as the {@link LeaseRenewer} keeps it: when it was claimed and last
 * renewed, by this process's clock.
 */
final class Lease {

    private final ScopedKey key;
    private final String token;
    private final Duration duration;
    private final Duration retention;
    private final long claimedAt;
    private volatile long renewedAt;

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

    String token() {
        return token;
    }

    /** @return how long the claim is honoured unless renewed */
    Duration duration() {
        return duration;
    }

    /** @return how long it may be renewed at most: a delivery that never ends must not hold its key for ever */
    Duration retention() {
        return retention;
    }

    long claimedAt() {
        return claimedAt;
    }

    long renewedAt() {
        return renewedAt;
    }

    void renewedAt(long nanos) {
        this.renewedAt = nanos;
    }
}
