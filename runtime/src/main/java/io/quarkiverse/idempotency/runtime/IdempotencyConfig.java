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
     * The purge job.
     */
    Purge purge();

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
         * How long the purge waits between two batches. A pause spreads a large purge over more time, with a lower
         * peak load on the database; the total load is the same, and the benchmark's consumers lost more throughput
         * over a purge paced by 50ms than over one run flat out. {@code 0} (the default) purges without pause.
         */
        @WithDefault("0")
        Duration pauseBetweenBatches();
    }
}
