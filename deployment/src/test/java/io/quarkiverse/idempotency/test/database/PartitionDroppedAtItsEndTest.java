package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.ShortPartitions;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A partition is dropped as it ends (its last key's retention passed), not at the purge job's next run: with the job
 * every hour, partitions of two seconds are each dropped within moments of their end.
 */
class PartitionDroppedAtItsEndTest {

    static final String TABLE = "partition_ends_keys";

    @RegisterExtension
    static final QuarkusUnitTest APP = ShortPartitions.app(TABLE);

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void eachPartitionIsDroppedAsItEnds() throws Exception {
        Sql sql = new Sql(dataSource);
        String partition = ShortPartitions.partitionOfANewKey(store, sql, TABLE);
        Instant end = Instant.parse(sql.query("SELECT to_char((regexp_match(pg_get_expr(c.relpartbound, c.oid),"
                + " 'TO \\(''([^'']*)''\\)'))[1]::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
                + " FROM pg_class c WHERE c.oid = '" + partition + "'::regclass"));
        // the purge job ran at startup only: its next run is an hour away
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> !exists(sql, partition));
        Duration lag = Duration.between(end, databaseNow(sql));
        // the timer's margin, a worker, the DDL of a drop and this test's polling, on a busy machine: well within a second
        // or two; the purge job alone would have dropped it in an hour
        assertTrue(lag.compareTo(Duration.ofMillis(2500)) < 0, partition + " ended at " + end + ", dropped " + lag
                + " later");
        // and so on, partition after partition, without the job
        String next = sql.query("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE"
                + " i.inhparent = '" + TABLE + "'::regclass ORDER BY c.relname LIMIT 1");
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> !exists(sql, next));
    }

    private static boolean exists(Sql sql, String partition) throws SQLException {
        return sql.query("SELECT to_regclass('" + partition + "')::text") != null;
    }

    private static Instant databaseNow(Sql sql) throws SQLException {
        return Instant.parse(sql.query("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"));
    }
}
