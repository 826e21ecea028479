package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;
import java.util.function.Predicate;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.stream.Stream;

import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.TableStatements;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** What startup says about the key table's layout (IDEMP3002, 3003, 3008, 3009), and the applications that hear it. */
final class LayoutLogs {

    /** The database store's startup messages. */
    static final Predicate<LogRecord> DATABASE_STORE = r -> r.getMessage() != null && r.getMessage().contains("IDEMP300");

    private LayoutLogs() {
    }

    /** @return the one message of a code, asserted said once at a level, its parameters filled in */
    static String saidOnce(List<LogRecord> records, String code, Level level) {
        List<LogRecord> said = records.stream().filter(r -> r.getMessage().contains(code)).toList();
        assertEquals(1, said.size(), code + " said once: " + records);
        assertEquals(level, said.get(0).getLevel());
        return String.format(said.get(0).getMessage(), said.get(0).getParameters());
    }

    static void notSaid(List<LogRecord> records, String code) {
        assertFalse(records.stream().anyMatch(r -> r.getMessage().contains(code)), code + " not said: " + records);
    }

    /** Creates an empty unpartitioned table of this version, and an object depending on it. */
    static void emptyTableWith(Class<?> test, String table, String dependent) {
        SchemaSql.beforeStart(test, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS " + table + " CASCADE");
            SchemaSql.run(Stream.concat(TableStatements.schema(table).stream(), Stream.of(dependent))
                    .toArray(String[]::new));
        });
    }

    /**
     * An application updating the schema of an empty unpartitioned table the default cannot make partitioned: it
     * asserts that startup said why once, at INFO, with the reason given, and did not warn.
     */
    static QuarkusUnitTest keptEmptyTable(String table, String reason) {
        return defaultLayout(table).assertLogRecords(records -> {
            String message = saidOnce(records, "IDEMP3008", Level.INFO);
            assertTrue(message.contains(reason), message);
            notSaid(records, "IDEMP3002");
        });
    }

    /** Asserts that the table kept its layout: one table, and the store knows it. */
    static void assertKept(DatabaseIdempotencyStore store, Sql sql, String table) throws SQLException {
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = '" + table + "'::regclass"));
        assertFalse(store.partitioned());
    }

    /** An application updating the schema of a table, with the layout left to the default. */
    static QuarkusUnitTest defaultLayout(String table) {
        return TestApps.postgres(new String[0], SchemaSql.class, LayoutLogs.class)
                .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
                .overrideConfigKey("quarkus.idempotency.database.table", table)
                .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
                .setLogRecordPredicate(DATABASE_STORE);
    }
}
