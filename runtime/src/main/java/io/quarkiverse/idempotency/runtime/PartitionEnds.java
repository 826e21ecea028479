package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkus.runtime.ShutdownEvent;
import io.vertx.core.Vertx;

/**
 * Runs the purge again as soon as the oldest partition of a time-partitioned key table ends, so that a partition is
 * dropped within a moment of its last key's expiry, not at the purge job's next run: a Vert.x timer, one at a time,
 * armed after each run of the purge job at the end the run saw. Nothing to do with an unpartitioned table.
 */
@Singleton
public class PartitionEnds {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(PartitionEnds.class);
    /** After the end: the database's clock, which the partitions' bounds are in, has passed it then. */
    static final Duration MARGIN = Duration.ofMillis(200);
    /** After the application started: its schema checked, the partitions' layout read. */
    static final Duration STARTUP_DELAY = Duration.ofSeconds(1);

    @Inject
    Instance<IdempotencyStore> stores;

    @Inject
    Vertx vertx;

    private final AtomicLong timer = new AtomicLong(-1);
    private volatile boolean stopped;

    /**
     * Arms the timer at the end of the oldest partition that holds live keys, as the last purge saw it; it runs the
     * purge on a worker thread (the purge job's, which skips it while the job is paused). When that end has passed
     * already: after a purge that succeeded, it ran past it (short periods on a busy machine), and the timer runs again
     * at once; after one that failed, the purge job's next run tries again, not a timer that would fire again and
     * again.
     *
     * @param purged whether the purge that just ran succeeded
     */
    void armAfter(Runnable purge, boolean purged) {
        SqlKeyStore store = sqlStore();
        if (stopped || store == null) {
            return;
        }
        Optional<Duration> untilEnd = store.untilPartitionEnd();
        if (untilEnd.isEmpty()) {
            return;
        }
        if (untilEnd.get().isNegative() || untilEnd.get().isZero()) {
            if (purged) {
                runAfter(MARGIN, purge);
            }
            return;
        }
        runAfter(untilEnd.get().plus(MARGIN), purge);
    }

    /**
     * Runs the purge once, a second from now, on a worker thread, when the table is partitioned: it drops what has
     * ended and arms the timer at the next end ({@link #armAfter}).
     */
    void soon(Runnable purge) {
        if (stopped || sqlStore() == null) {
            return;
        }
        runAfter(STARTUP_DELAY, purge);
    }

    /**
     * The one timer: after a delay, the purge on a worker thread, when the table is partitioned and the application
     * has not stopped; a timer armed before is cancelled.
     */
    private void runAfter(Duration delay, Runnable purge) {
        long id = vertx.setTimer(delay.toMillis(), t -> vertx.executeBlocking(() -> {
            SqlKeyStore store = sqlStore();
            if (!stopped && store != null && store.partitioned()) {
                try {
                    purge.run();
                } catch (RuntimeException e) {
                    LOG.purgeAtPartitionEndFailed(e);
                }
            }
            return null;
        }, false));
        long previous = timer.getAndSet(id);
        if (previous >= 0) {
            vertx.cancelTimer(previous);
        }
        if (stopped) {
            vertx.cancelTimer(id); // armed while the application stopped
        }
    }

    // The database store, over JDBC or the reactive client; null with another store.
    private SqlKeyStore sqlStore() {
        return stores.isResolvable() && stores.get() instanceof SqlKeyStore store ? store : null;
    }

    /** Before the datasource goes: no purge after this. */
    void stop(@Observes ShutdownEvent event) {
        stop();
    }

    @PreDestroy
    void stop() {
        stopped = true;
        long id = timer.getAndSet(-1);
        if (id >= 0) {
            vertx.cancelTimer(id);
        }
    }
}
