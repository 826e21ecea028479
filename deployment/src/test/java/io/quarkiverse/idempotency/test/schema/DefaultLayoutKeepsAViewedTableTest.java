package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset, an empty unpartitioned table that a view reads is not made again partitioned (that
 * would drop the view, or fail): it keeps its layout, the view still reads it, and startup says why, at INFO.
 */
class DefaultLayoutKeepsAViewedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsAViewedTableTest.class, "viewed_keys",
                "CREATE VIEW viewed_keys_report AS SELECT state, count(*) FROM viewed_keys GROUP BY state");
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.defaultLayout("viewed_keys")
            .assertLogRecords(DefaultLayoutKeepsAViewedTableTest::whySaidOnceAtInfo);

    static void whySaidOnceAtInfo(List<LogRecord> records) {
        String message = LayoutLogs.saidOnce(records, "IDEMP3008", Level.INFO);
        assertTrue(message.contains("other objects depend on it"), message);
        LayoutLogs.notSaid(records, "IDEMP3002");
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableAndItsViewStay() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'viewed_keys'::regclass"));
        assertFalse(store.partitioned());
        assertEquals("0", sql.query("SELECT count(*)::text FROM viewed_keys_report"));
    }
}
