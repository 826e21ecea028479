package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;

import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.Database.Partitioning;

/**
 * How the key table is laid out when the extension creates it, and how its partitions are cut.
 *
 * @param partitioning the layout asked for; null: the default, partitioned where the server, the datasource and
 *        the table allow it, else unpartitioned
 * @param period how much expiry time one partition covers
 * @param retention the configured retention: partitions reach this far ahead (longer retentions of single methods
 *        make them reach further on first use)
 */
public record PartitionPlan(Partitioning partitioning, Duration period, Duration retention) {

    /** An unpartitioned table, for stores built by hand (tests, benchmarks). */
    public static final PartitionPlan NONE = new PartitionPlan(Partitioning.NONE, Duration.ofHours(6),
            Duration.ofHours(24));

    /** The first PostgreSQL version that detaches a partition without blocking the table. */
    public static final int MINIMUM_SERVER = 14;

    /**
     * @return the plan the configuration asks for
     * @throws IllegalArgumentException when the partition period is below a second
     */
    public static PartitionPlan of(IdempotencyConfig config) {
        PartitionPlan plan = new PartitionPlan(config.database().partitioning().orElse(null),
                config.database().partitionPeriod().orElseGet(() -> defaultPeriod(config.retention())),
                config.retention());
        if (plan.period().compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("quarkus.idempotency.database.partition-period must be at least 1s, not "
                    + plan.period());
        }
        return plan;
    }

    /**
     * @return the default period: a quarter of the retention (a key is then kept at most 25% past its retention, and a
     *         lookup visits about five partitions), at least one second
     */
    public static Duration defaultPeriod(Duration retention) {
        Duration quarter = retention.dividedBy(4);
        return quarter.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : quarter;
    }
}
