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
import io.quarkiverse.idempotency.test.support.TestApps;
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
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", TABLE)
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .setLogRecordPredicate(r -> r.getMessage() != null && r.getMessage().contains("IDEMP300"))
            .assertLogRecords(DefaultLayoutFallsBackTest::whySaidAtInfo);

    static void whySaidAtInfo(List<LogRecord> records) {
        List<LogRecord> said = records.stream().filter(r -> r.getMessage().contains("IDEMP3008")).toList();
        assertEquals(1, said.size(), "said once: " + records);
        assertEquals(Level.INFO, said.get(0).getLevel());
        String message = String.format(said.get(0).getMessage(), said.get(0).getParameters());
        assertTrue(message.contains("no room for its partitions' names") && message.contains("partitioning=none"),
                message);
        assertFalse(records.stream().anyMatch(r -> r.getMessage().contains("IDEMP3002")), "no warning: " + records);
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
