package io.quarkiverse.idempotency.runtime;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduler;

/**
 * The scheduled purge of expired keys. Registered at build time only with the database store and
 * {@code quarkus.idempotency.purge.enabled}; {@code quarkus.idempotency.purge.every=off} stops it at runtime. On a
 * time-partitioned table it also runs as each partition ends ({@link PartitionEnds}).
 */
@Singleton
public class PurgeJob {

    /** The job's identity in the Quarkus scheduler. */
    public static final String IDENTITY = "idempotency-purge";

    @Inject
    IdempotencyPurge purge;

    @Inject
    PartitionEnds partitionEnds;

    @Inject
    Scheduler scheduler;

    @Inject
    IdempotencyConfig config;

    @Scheduled(identity = IDENTITY, every = "${quarkus.idempotency.purge.every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP, skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void purge() {
        boolean purged = false;
        try {
            purge.purgeExpired();
            purged = true;
        } finally {
            // partitioned: again when the oldest partition ends, not only at the next run
            partitionEnds.armAfter(this::purgeAtPartitionEnd, purged);
        }
    }

    /**
     * Starts the partition-end purges with the application, not with the job's first run: the scheduler skips a run
     * that fires while the application is still starting ({@code ApplicationNotRunning}), and the next one is
     * {@code every} away (an hour by default), which left a partitioned table's partitions undropped for that long.
     * Not when the job is off.
     */
    void startPartitionEnds(@Observes StartupEvent event) {
        String every = config.purge().every().trim();
        if (!every.equalsIgnoreCase("off") && !every.equalsIgnoreCase("disabled")) {
            partitionEnds.soon(this::purgeAtPartitionEnd);
        }
    }

    // A run the scheduler did not start: not while the job is paused.
    private void purgeAtPartitionEnd() {
        if (!scheduler.isPaused(IDENTITY)) {
            purge();
        }
    }
}
