package io.quarkiverse.idempotency.runtime;

/**
 * Where the extension reports what it does. The Micrometer implementation is registered at build time when the
 * application has Micrometer; otherwise nothing is recorded.
 */
public interface IdempotencyMetrics {

    /** Records how one delivery on a channel (or programmatic scope) ended. */
    void delivery(String channel, Outcome outcome);

    /** Records how long one claim took on a channel. */
    void claimLatency(String channel, long nanos);

    /** Records a claim whose lease ran out being taken over (its owner died, or outlived its lease). */
    void takeover(String channel);

    /** Records rows deleted by a purge. */
    void purged(long rows);

    /** Records a duplicate delivery: where it comes from, and how its payload compares. */
    default void duplicate(String channel, DuplicateOrigin origin, PayloadMatch payload) {
    }

    /** Records how long after its key was confirmed a duplicate arrived. */
    default void duplicateAge(String channel, DuplicateOrigin origin, long millis) {
    }

    /** Records nothing. */
    IdempotencyMetrics NOOP = new IdempotencyMetrics() {
        @Override
        public void delivery(String channel, Outcome outcome) {
        }

        @Override
        public void claimLatency(String channel, long nanos) {
        }

        @Override
        public void takeover(String channel) {
        }

        @Override
        public void purged(long rows) {
        }
    };
}
