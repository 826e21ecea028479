package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;

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
 * With {@code partitioning} unset, a table that cannot be partitioned (here: a name leaving no room for its partitions'
 * names; likewise PostgreSQL before 14, or transactions other than READ COMMITTED) is created as one table, and
 * startup says why, at INFO, rather than refusing to start as {@code partitioning=time} does.
 */
class DefaultLayoutFallsBackTest {

    static final String TABLE = "idempotency_keys_of_the_payments_service_of_region_1";

    static {
        SchemaSql.beforeStart(DefaultLayoutFallsBackTest.class,
                () -> SchemaSql.run("DROP TABLE IF EXISTS " + TABLE + " CASCADE"));
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.defaultLayout(TABLE)
            .assertLogRecords(DefaultLayoutFallsBackTest::whySaidAtInfo);

    static void whySaidAtInfo(List<LogRecord> records) {
        String message = LayoutLogs.saidOnce(records, "IDEMP3008", Level.INFO);
        assertTrue(message.contains("no room for its partitions' names") && message.contains("partitioning=none"),
                message);
        LayoutLogs.notSaid(records, "IDEMP3002");
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void oneTableIsCreated() throws SQLException {
        assertEquals("r", new Sql(dataSource).query("SELECT relkind::text FROM pg_class WHERE oid = '" + TABLE
                + "'::regclass"));
        assertFalse(store.partitioned());
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("s", "k"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
    }
}
