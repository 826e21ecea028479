package io.quarkiverse.idempotency.runtime;

/**
 * Where the extension reports what it does. The Micrometer implementation is registered at build time when the
 * application has Micrometer; otherwise nothing is recorded.
 */
public interface IdempotencyMetrics {

    /** Records the outcome of one delivery on a channel (or programmatic scope). */
    void delivery(String channel, Outcome outcome);

    /** Records how long one claim took. */
    void claimLatency(long nanos);

    /** Records rows deleted by a purge. */
    void purged(long rows);

    /** Records nothing. */
    IdempotencyMetrics NOOP = new IdempotencyMetrics() {
        @Override
        public void delivery(String channel, Outcome outcome) {
        }

        @Override
        public void claimLatency(long nanos) {
        }

        @Override
        public void purged(long rows) {
        }
    };
}
