package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.logging.Level;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A move to partitions whose swap fails (here a table already holds the name the old table was to take, which no check
 * before the move looks at) leaves the table as it was: without the bound constraint the move added beside the consumers, which
 * would otherwise refuse every key
 * expiring past it (the retention, twice, and a period from the attempt) from then on.
 */
class PartitionMigrationFailedSwapTest {

    static {
        SchemaSql.beforeStart(PartitionMigrationFailedSwapTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS swap_refs", "DROP TABLE IF EXISTS swap_keys_plegacy",
                    "DROP TABLE IF EXISTS swap_keys CASCADE");
            SchemaSql.firstVersion("swap_keys");
            SchemaSql.run("CREATE TABLE swap_keys_plegacy (left_over INTEGER)");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.movingAtStartup("swap_keys", new String[0])
            .overrideConfigKey("quarkus.idempotency.retention", "1h")
            // the move started (IDEMP3003), and failed at its swap, on the name taken (IDEMP3001)
            .setLogRecordPredicate(LayoutLogs.DATABASE_STORE)
            .assertLogRecords(records -> {
                LayoutLogs.saidOnce(records, "IDEMP3003", Level.INFO);
                String failed = LayoutLogs.saidOnce(records, "IDEMP3001", Level.WARNING);
                assertTrue(failed.contains("swap_keys_plegacy"), failed);
            });

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableIsLeftAsItWasWithoutTheBound() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'swap_keys'::regclass"));
        assertFalse(store.partitioned());
        assertEquals("0", sql.query("SELECT count(*)::text FROM pg_constraint WHERE conname = 'swap_keys_legacy_bound'"));
        assertEquals("true", sql.query("SELECT (to_regclass('swap_keys_key_expiry') IS NULL)::text"),
                "the index the move built is dropped too");
        assertEquals("0", sql.query("SELECT count(*)::text FROM swap_keys_plegacy"), "the name's holder is untouched");
        // a key expiring well past the bound the attempt used (2 x 1 h + a period)
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("s", "far"), "t#1", Duration.ofSeconds(30),
                Duration.ofDays(30)).result());
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#2", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
    }
}
