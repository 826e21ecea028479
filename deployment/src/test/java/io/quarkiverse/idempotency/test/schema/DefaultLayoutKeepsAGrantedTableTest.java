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
 * With {@code partitioning} unset, an empty unpartitioned table on which privileges were granted is not made again
 * partitioned (a new table would not have them): it keeps its layout and its grant, and startup says why, at INFO.
 */
class DefaultLayoutKeepsAGrantedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsAGrantedTableTest.class, "granted_keys",
                "GRANT SELECT ON granted_keys TO PUBLIC");
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.defaultLayout("granted_keys")
            .assertLogRecords(DefaultLayoutKeepsAGrantedTableTest::whySaidOnceAtInfo);

    static void whySaidOnceAtInfo(List<LogRecord> records) {
        String message = LayoutLogs.saidOnce(records, "IDEMP3008", Level.INFO);
        assertTrue(message.contains("privileges granted"), message);
        LayoutLogs.notSaid(records, "IDEMP3002");
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableAndItsGrantStay() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'granted_keys'::regclass"));
        assertFalse(store.partitioned());
        assertEquals("true", sql.query("SELECT has_table_privilege('public', 'granted_keys', 'SELECT')::text"));
    }
}
