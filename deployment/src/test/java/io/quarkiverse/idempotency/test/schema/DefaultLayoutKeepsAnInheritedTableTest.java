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
 * With {@code partitioning} unset, an empty unpartitioned table that something the extension's checks do not look for
 * depends on (here a table inheriting from it) cannot be dropped: the replacement, in a transaction of its own, is rolled
 * back whole, the table keeps its layout and its child, and startup says why, at INFO; the rest of the schema update
 * goes on.
 */
class DefaultLayoutKeepsAnInheritedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsAnInheritedTableTest.class, "inherited_keys",
                "CREATE TABLE inherited_keys_child () INHERITS (inherited_keys)");
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.defaultLayout("inherited_keys")
            .assertLogRecords(DefaultLayoutKeepsAnInheritedTableTest::whySaidOnceAtInfo);

    static void whySaidOnceAtInfo(List<LogRecord> records) {
        String message = LayoutLogs.saidOnce(records, "IDEMP3008", Level.INFO);
        assertTrue(message.contains("making it again, partitioned, failed"), message);
        LayoutLogs.notSaid(records, "IDEMP3002");
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableAndItsChildStay() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'inherited_keys'::regclass"));
        assertFalse(store.partitioned());
        assertEquals("0", sql.query("SELECT count(*)::text FROM inherited_keys_child"));
        assertEquals("inherited_keys_claims", sql.query("SELECT indexname FROM pg_indexes WHERE tablename ="
                + " 'inherited_keys' AND indexname LIKE '%claims'"), "the schema update went on");
    }
}
