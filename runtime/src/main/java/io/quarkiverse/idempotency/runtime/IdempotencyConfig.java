package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * Runtime configuration of the idempotency extension.
 */
@ConfigMapping(prefix = "quarkus.idempotency")
@ConfigRoot(phase = ConfigPhase.RUN_TIME)
public interface IdempotencyConfig {

    /**
     * How long a handled key is remembered. It must outlast the slowest duplicate: the longest retry delay, a
     * dead-letter queue drained by hand next week, a replay. Overridden per method by {@code @Idempotent(retention)}.
     */
    @WithDefault("24h")
    Duration retention();

    /**
     * How long a claim whose handler has not finished is honoured before another delivery may take it over. It must
     * outlast the slowest handler, or two deliveries run one message at once; it bounds how long the message of a
     * crashed consumer waits before it is handled again. Claims of running handlers are renewed every third of this.
     * Overridden per method by {@code @Idempotent(claimTimeout)}.
     */
    @WithDefault("5m")
    Duration claimTimeout();

    /**
     * How long a message waits before it is requeued when its key is claimed by a delivery in progress elsewhere, or
     * when the store failed. The message stays unacknowledged meanwhile (it holds one slot of the channel's prefetch).
     */
    @WithDefault("1s")
    Duration retryDelay();

    /**
     * How many keys this process confirmed are remembered in memory, so that a duplicate of one is acked without a
     * round trip to the store. Safe (a confirmed key is final); {@code 0} turns it off.
     */
    @WithDefault("100000")
    int confirmedKeysCacheSize();

    /**
     * The database store.
     */
    Database database();

    /**
     * The purge job.
     */
    Purge purge();

    /**
     * The database store.
     */
    interface Database {

        /**
         * Whether the claim's own transaction commits without waiting for its WAL record to reach disk (PostgreSQL's
         * {@code synchronous_commit = off}, for that transaction only). The claim is visible to every other delivery at
         * once, as always, and becomes durable at the latest when the handler's transaction commits (the WAL is flushed
         * in order) or within three times {@code wal_writer_delay} (600ms by default).
         * <p>
         * The trade-off: if the database server (not the application) crashes, or fails over to a synchronous standby,
         * the claims made in that last moment may be lost. For each such handler still running, a redelivery can then
         * run the handler again at once, while the first run is still going, instead of waiting for it. A {@code
         * @Transactional} handler's first run then finds no claim to confirm, so its transaction rolls back and its
         * message is retried: its database work stays exactly-once, but work outside the database (an HTTP call) may
         * happen twice. A handler without a transaction has already done its work: its message is acked, but its key is
         * never confirmed, so a later duplicate runs again (a warning at startup names such methods).
         * <p>
         * It saves one WAL flush wait per message. Use it for {@code @Transactional} handlers whose effects are all in
         * the database, where flushes are slow; leave it off otherwise.
         */
        @WithDefault("false")
        boolean asynchronousClaimCommit();
    }

    /**
     * The purge job.
     */
    interface Purge {

        /**
         * How often the purge job runs, as a duration ({@code 1h}) or {@code off} to stop it at runtime.
         */
        @WithDefault("1h")
        String every();

        /**
         * How many expired keys one purge statement deletes; the job repeats until fewer are left, so that no single
         * statement holds locks for long.
         */
        @WithDefault("10000")
        int batchSize();

        /**
         * How much of its running time the purge may spend deleting, in percent (1 to 100). After each batch it pauses
         * for as long as that batch took, times {@code (100 - busy-percent) / busy-percent}: at 10 (the default) it
         * rests nine times as long as it worked, so the consumers sharing the database keep nearly all of it, and the
         * pace follows the database's load by itself. {@code 100} purges flat out.
         */
        @WithDefault("10")
        int busyPercent();

        /**
         * The shortest pause between two batches, whatever {@code busy-percent} gives. {@code 0} (the default) leaves
         * the pace to {@code busy-percent}.
         */
        @WithDefault("0")
        Duration pauseBetweenBatches();
    }
}
