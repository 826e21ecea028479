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
 * With {@code partitioning} unset, an empty unpartitioned table that a view reads is not made again partitioned (that
 * would drop the view, or fail): it keeps its layout, the view still reads it, and startup says why, at INFO.
 */
class DefaultLayoutKeepsAViewedTableTest {

    static {
        SchemaSql.beforeStart(DefaultLayoutKeepsAViewedTableTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS viewed_keys CASCADE");
            SchemaSql.run(Stream.concat(TableStatements.schema("viewed_keys").stream(),
                    Stream.of("CREATE VIEW viewed_keys_report AS SELECT state, count(*) FROM viewed_keys GROUP BY state"))
                    .toArray(String[]::new));
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "viewed_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .setLogRecordPredicate(r -> r.getMessage() != null && r.getMessage().contains("IDEMP300"))
            .assertLogRecords(DefaultLayoutKeepsAViewedTableTest::whySaidOnceAtInfo);

    static void whySaidOnceAtInfo(List<LogRecord> records) {
        List<LogRecord> said = records.stream().filter(r -> r.getMessage().contains("IDEMP3008")).toList();
        assertEquals(1, said.size(), "said once: " + records);
        assertEquals(Level.INFO, said.get(0).getLevel());
        String message = String.format(said.get(0).getMessage(), said.get(0).getParameters());
        assertTrue(message.contains("other objects depend on it"), message);
        assertFalse(records.stream().anyMatch(r -> r.getMessage().contains("IDEMP3002")), "no warning: " + records);
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
