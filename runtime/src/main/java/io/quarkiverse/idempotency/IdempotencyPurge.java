package io.quarkiverse.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Deletes expired keys from the store, in bounded batches. The purge job calls it on schedule
 * ({@code quarkus.idempotency.purge.every}); inject it to purge now. Runs never overlap in one process; instances
 * sharing a database each delete different rows.
 */
public interface IdempotencyPurge {

    /**
     * One finished purge.
     *
     * @param finishedAt when it finished
     * @param deleted how many expired keys it deleted
     * @param took how long it took
     */
    record Run(Instant finishedAt, long deleted, Duration took) {
    }

    /**
     * Deletes every expired key, {@code quarkus.idempotency.purge.batch-size} at a time, pausing after each batch so
     * that deleting takes at most {@code quarkus.idempotency.purge.busy-percent} of the time (and at least
     * {@code quarkus.idempotency.purge.pause-between-batches}).
     *
     * @return the number of keys deleted
     */
    long purgeExpired();

    /** @return the last finished purge, if any ran in this process */
    Optional<Run> lastRun();
}
