package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkus.runtime.StartupEvent;

/**
 * The purge: deletes expired keys in bounded batches, paced by {@code quarkus.idempotency.purge.busy-percent}.
 */
@Singleton
public class StorePurge implements IdempotencyPurge {

    private static final Logger LOG = Logger.getLogger(StorePurge.class);

    private final IdempotencyStore store;
    private final IdempotencyConfig config;
    private final IdempotencyMetrics metrics;
    private volatile Run lastRun;

    @Inject
    public StorePurge(IdempotencyStore store, IdempotencyConfig config, IdempotencyMetrics metrics) {
        this.store = store;
        this.config = config;
        this.metrics = metrics;
    }

    /** Checks the purge's settings at startup: a bad one stops the application, naming it. */
    void checkSettings(@Observes StartupEvent event) {
        checkBusyPercent(config.purge().busyPercent());
        checkBatchSize(config.purge().batchSize());
    }

    @Override
    public synchronized long purgeExpired() {
        long start = System.nanoTime();
        int batchSize = config.purge().batchSize(); // checked once, at startup
        int busyPercent = config.purge().busyPercent();
        long minimumPause = config.purge().pauseBetweenBatches().toNanos();
        long deleted = 0;
        int batch;
        while (true) {
            long batchStart = System.nanoTime();
            batch = store.purgeExpired(batchSize);
            deleted += batch;
            metrics.purged(batch);
            if (batch < batchSize) {
                break;
            }
            // Throttling on purpose: the consumers share the database with this background work.
            if (!pause(pauseNanos(System.nanoTime() - batchStart, busyPercent, minimumPause))) {
                break;
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        lastRun = new Run(Instant.now(), deleted, took);
        LOG.debugf("Purged %d expired idempotency keys in %d ms", deleted, took.toMillis());
        return deleted;
    }

    /**
     * The pause after a batch: long enough that deleting takes at most {@code busyPercent} of the time, and at least
     * {@code minimumPauseNanos}.
     *
     * @param batchNanos how long the batch took
     * @param busyPercent the share of the time spent deleting, 1 to 100
     * @param minimumPauseNanos the shortest pause
     * @return the pause in nanoseconds
     */
    static long pauseNanos(long batchNanos, int busyPercent, long minimumPauseNanos) {
        long paced = batchNanos / busyPercent * (100 - busyPercent);
        return Math.max(minimumPauseNanos, paced);
    }

    /** A bad setting is an error naming it, never a purge that never pauses or never ends. */
    private static void checkBusyPercent(int configured) {
        if (configured < 1 || configured > 100) {
            throw new IllegalArgumentException("quarkus.idempotency.purge.busy-percent must be from 1 to 100, not "
                    + configured);
        }
    }

    /** A batch of nothing would never end the purge; a negative one fails every run. */
    private static void checkBatchSize(int configured) {
        if (configured < 1) {
            throw new IllegalArgumentException("quarkus.idempotency.purge.batch-size must be at least 1, not "
                    + configured);
        }
    }

    /** @return false when the thread was interrupted: the purge stops */
    private static boolean pause(long nanos) {
        long deadline = System.nanoTime() + nanos;
        long left = nanos;
        while (left > 0 && !Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(left); // may return early: park again until the deadline
            left = deadline - System.nanoTime();
        }
        return !Thread.currentThread().isInterrupted();
    }

    @Override
    public Optional<Run> lastRun() {
        return Optional.ofNullable(lastRun);
    }
}
