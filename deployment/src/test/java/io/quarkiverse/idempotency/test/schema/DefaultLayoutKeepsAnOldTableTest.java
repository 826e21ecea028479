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
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset (the default: partitioned) and {@code schema-management=update}, an unpartitioned
 * table of an earlier version holding a key is brought up to date and keeps its layout: moving it is asked for on one
 * instance ({@code partitioning=time}), as every instance under {@code update} would otherwise move it at once.
 * Startup warns, naming the move.
 */
class DefaultLayoutKeepsAnOldTableTest {

    static {
        SchemaSql.beforeStart(DefaultLayoutKeepsAnOldTableTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS default_kept_keys CASCADE");
            SchemaSql.firstVersion("default_kept_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class, LayoutLogs.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "default_kept_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off")
            .setLogRecordPredicate(LayoutLogs.DATABASE_STORE)
            .assertLogRecords(DefaultLayoutKeepsAnOldTableTest::oneWarningNamingTheMove);

    static void oneWarningNamingTheMove(List<LogRecord> records) {
        String message = LayoutLogs.saidOnce(records, "IDEMP3002", Level.WARNING);
        assertTrue(message.contains("partitioning=time") && message.contains("schema-management=update"), message);
        LayoutLogs.notSaid(records, "IDEMP3003");
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableIsBroughtUpToDateAndKept() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'default_kept_keys'::regclass"));
        assertFalse(store.partitioned());
        SchemaSql.assertUpToDate(store, sql, "public", "default_kept_keys");
    }
}
