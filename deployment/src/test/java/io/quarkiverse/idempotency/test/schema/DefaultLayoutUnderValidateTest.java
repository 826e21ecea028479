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
import io.quarkiverse.idempotency.runtime.database.TableStatements;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset (the default: partitioned) and {@code schema-management=validate}, an up-to-date
 * unpartitioned table keeps its layout, and startup warns once, naming the move and how to keep one table.
 */
class DefaultLayoutUnderValidateTest {

    static {
        SchemaSql.beforeStart(DefaultLayoutUnderValidateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS validated_keys CASCADE");
            SchemaSql.run(TableStatements.schema("validated_keys").toArray(String[]::new));
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class, LayoutLogs.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "validated_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .setLogRecordPredicate(LayoutLogs.DATABASE_STORE)
            .assertLogRecords(DefaultLayoutUnderValidateTest::oneWarningNamingTheMove);

    static void oneWarningNamingTheMove(List<LogRecord> records) {
        String message = LayoutLogs.saidOnce(records, "IDEMP3002", Level.WARNING);
        assertTrue(message.contains("'validated_keys'") && message.contains("schema-management=update")
                && message.contains("partitioning=none"), message);
        LayoutLogs.notSaid(records, "IDEMP3003");
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableKeepsItsLayoutAndWorks() throws SQLException {
        assertEquals("r", new Sql(dataSource).query("SELECT relkind::text FROM pg_class"
                + " WHERE oid = 'validated_keys'::regclass"));
        assertFalse(store.partitioned());
        ScopedKey key = new ScopedKey("s", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "t#1", Duration.ofSeconds(30), Duration.ofHours(1)).result());
    }
}
