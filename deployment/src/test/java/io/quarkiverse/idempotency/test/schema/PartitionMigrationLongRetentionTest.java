package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.SQLException;
import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The move to partitions bounds the old table past every key written until its swap: with a method keeping its keys
 * 30 days, and a scope handled only through {@code Idempotency.handle} 40 days, while the configured retention is an
 * hour, the bound is the longest, 40 days, ahead (and the hour and a period more, for the move's own time), not twice
 * the hour. A bound from the configured retention alone refuses that method's keys by its check while the move runs (and
 * fails the move when one is written before the check is validated).
 */
class PartitionMigrationLongRetentionTest {

    static {
        SchemaSql.beforeStart(PartitionMigrationLongRetentionTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS long_keys CASCADE");
            SchemaSql.firstVersion("long_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.movingAtStartup("long_keys", new String[] { "long-kept" }, LongKept.class)
            .overrideConfigKey("quarkus.idempotency.retention", "1h")
            // a scope only Idempotency.handle uses, kept longer still
            .overrideConfigKey("quarkus.idempotency.channels.\"handled-by-hand\".retention", "40d");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableTakesEveryKeyOfTheLongestRetention() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("p", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'long_keys'::regclass"));
        assertEquals("true", sql.query("SELECT ((regexp_match(pg_get_expr(relpartbound, oid), 'TO \\(''([^'']+)''\\)'))[1]"
                + "::timestamptz BETWEEN now() + interval '40 days' AND now() + interval '41 days')::text FROM pg_class"
                + " WHERE oid = 'long_keys_plegacy'::regclass"),
                "the old table's bound: the scope's 40 days ahead, and the configured hour and a period more");
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result(), "the old table's key is honoured");
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("handled-by-hand", "k"), "t#2", Duration.ofSeconds(30),
                Duration.ofDays(40)).result());
    }

    @ApplicationScoped
    public static class LongKept {

        @Incoming("long-kept")
        @Idempotent(retention = "30d")
        public void handle(String payload) {
        }
    }
}
