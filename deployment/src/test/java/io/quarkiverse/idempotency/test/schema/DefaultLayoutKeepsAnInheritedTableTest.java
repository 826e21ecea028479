package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.stream.Stream;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.TableStatements;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset, an empty unpartitioned table that something the extension's checks do not look for
 * depends on (here a table inheriting from it) cannot be dropped: the replacement, in a transaction of its own, is rolled
 * back whole, the table keeps its layout and its child, and startup says why, at INFO; the rest of the schema update
 * goes on.
 */
class DefaultLayoutKeepsAnInheritedTableTest {

    static {
        SchemaSql.beforeStart(DefaultLayoutKeepsAnInheritedTableTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS inherited_keys CASCADE");
            SchemaSql.run(Stream.concat(TableStatements.schema("inherited_keys").stream(),
                    Stream.of("CREATE TABLE inherited_keys_child () INHERITS (inherited_keys)"))
                    .toArray(String[]::new));
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "inherited_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .setLogRecordPredicate(r -> r.getMessage() != null && r.getMessage().contains("IDEMP300"))
            .assertLogRecords(DefaultLayoutKeepsAnInheritedTableTest::whySaidOnceAtInfo);

    static void whySaidOnceAtInfo(List<LogRecord> records) {
        List<LogRecord> said = records.stream().filter(r -> r.getMessage().contains("IDEMP3008")).toList();
        assertEquals(1, said.size(), "said once: " + records);
        assertEquals(Level.INFO, said.get(0).getLevel());
        String message = String.format(said.get(0).getMessage(), said.get(0).getParameters());
        assertTrue(message.contains("making it again, partitioned, failed"), message);
        assertFalse(records.stream().anyMatch(r -> r.getMessage().contains("IDEMP3002")), "no warning: " + records);
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
