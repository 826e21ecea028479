package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.logging.LogRecord;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Two instances started with {@code partitioning=time} and {@code schema-management=update} on an unpartitioned table
 * holding keys: only one moves it. Here the other instance's move is under way (the test holds its lock): this one
 * starts without building anything beside it, says so, and works on the table as it is.
 */
class PartitionMigrationElsewhereTest {

    static final String RELEASE = "idempotency.test.move-elsewhere.release";
    static final String GAVE_UP = "idempotency.test.move-elsewhere.gave-up";

    static {
        SchemaSql.beforeStart(PartitionMigrationElsewhereTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS elsewhere_keys CASCADE");
            SchemaSql.firstVersion("elsewhere_keys");
            SchemaSql.holdOpenTransaction("SELECT pg_advisory_lock(hashtextextended('quarkus-idempotency move '"
                    + " || 'elsewhere_keys'::regclass::oid::text, 0))", RELEASE, GAVE_UP);
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.movingAtStartup("elsewhere_keys", new String[0])
            .setLogRecordPredicate(LayoutLogs.DATABASE_STORE)
            .assertLogRecords(PartitionMigrationElsewhereTest::saidAndNotMoved);

    static void saidAndNotMoved(List<LogRecord> records) {
        assertTrue(records.stream().anyMatch(r -> r.getMessage().contains("IDEMP3009")), "said: " + records);
        assertFalse(records.stream().anyMatch(r -> r.getMessage().contains("IDEMP3003")), "not moved: " + records);
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @AfterAll
    static void release() {
        System.setProperty(RELEASE, "true");
    }

    @Test
    void theOtherInstanceMovesItAndThisOneWorksOnTheTableAsItIs() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'elsewhere_keys'::regclass"));
        assertEquals("0", sql.query("SELECT count(*)::text FROM pg_indexes WHERE indexname = 'elsewhere_keys_key_expiry'"),
                "nothing built beside the other instance's move");
        assertFalse(store.partitioned());
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
    }
}
