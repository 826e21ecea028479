package io.quarkiverse.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyMetrics;

/**
 * Deletes expired keys from the store, in bounded batches. The purge job calls it on schedule
 * ({@code quarkus.idempotency.purge.every}); call it from code to purge now. Runs never overlap in one process;
 * instances sharing a database each delete different rows.
 */
@Singleton
public class IdempotencyPurge {

    private static final Logger LOG = Logger.getLogger(IdempotencyPurge.class);

    /**
     * One finished purge.
     *
     * @param finishedAt when it finished
     * @param deleted how many expired keys it deleted
     * @param took how long it took
     */
    public record Run(Instant finishedAt, long deleted, Duration took) {
    }

    private final IdempotencyStore store;
    private final IdempotencyConfig config;
    private final IdempotencyMetrics metrics;
    private volatile Run lastRun;

    @Inject
    public IdempotencyPurge(IdempotencyStore store, IdempotencyConfig config, IdempotencyMetrics metrics) {
        this.store = store;
        this.config = config;
        this.metrics = metrics;
    }

    /**
     * Deletes every expired key, {@code quarkus.idempotency.purge.batch-size} at a time, pausing
     * {@code quarkus.idempotency.purge.pause-between-batches} between batches.
     *
     * @return the number of keys deleted
     */
    public synchronized long purgeExpired() {
        long start = System.nanoTime();
        int batchSize = config.purge().batchSize();
        long pauseNanos = config.purge().pauseBetweenBatches().toNanos();
        long deleted = 0;
        int batch;
        while (true) {
            batch = store.purgeExpired(batchSize);
            deleted += batch;
            metrics.purged(batch);
            if (batch < batchSize) {
                break;
            }
            if (pauseNanos > 0) {
                // Throttling on purpose: the consumers share the database with this background work.
                LockSupport.parkNanos(pauseNanos);
                if (Thread.currentThread().isInterrupted()) {
                    break;
                }
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        lastRun = new Run(Instant.now(), deleted, took);
        LOG.debugf("Purged %d expired idempotency keys in %d ms", deleted, took.toMillis());
        return deleted;
    }

    /** @return the last finished purge, if any ran in this process */
    public Optional<Run> lastRun() {
        return Optional.ofNullable(lastRun);
    }
}
