package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * Validating a table that still has version 1.1's check constraint on its state column starts (the table works), and
 * warns once, however often the table is validated again (the health check does), naming the statement that drops it.
 */
class StateCheckValidateTest {

    static {
        SchemaSql.beforeStart(StateCheckValidateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS validated_checked_keys CASCADE");
            SchemaSql.withStateCheck("validated_checked_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class, LayoutLogs.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "validated_checked_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none")
            .setLogRecordPredicate(r -> r.getMessage() != null && r.getMessage().contains("IDEMP30"))
            .assertLogRecords(StateCheckValidateTest::oneWarningNamingTheDrop);

    static void oneWarningNamingTheDrop(List<LogRecord> records) {
        String message = LayoutLogs.saidOnce(records, "IDEMP3011", Level.WARNING);
        assertTrue(message.contains("ALTER TABLE validated_checked_keys DROP CONSTRAINT IF EXISTS"
                + " validated_checked_keys_state_check"), message);
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableIsLeftAsItIsAndWorks() throws SQLException {
        store.check();
        store.check();
        assertEquals("1", SchemaSql.stateChecks(new Sql(dataSource), "validated_checked_keys"),
                "validation changes nothing");
        ScopedKey key = new ScopedKey("s", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "t#1", Duration.ofSeconds(30), Duration.ofHours(1)).result());
    }
}
