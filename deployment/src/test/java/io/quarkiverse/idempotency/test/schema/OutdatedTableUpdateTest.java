package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.Sql;
import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A table created by an earlier version of the extension is brought up to date at startup: the new columns added,
 * the state constraint widened, the keys it holds kept.
 */
class OutdatedTableUpdateTest {

    static {
        SchemaSql.beforeStart(OutdatedTableUpdateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS old_keys");
            SchemaSql.firstVersion("old_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "old_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableIsUpToDateAndItsKeysAreKept() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result(), "a key handled before the upgrade is still a fact");
        ScopedKey poison = new ScopedKey("s", "poison");
        store.claim(poison, "t#2", Duration.ofSeconds(30), Duration.ofHours(1));
        assertEquals(1, store.recordFailure(poison, "t#2", "boom", 1, Duration.ofHours(1)));
        assertEquals("DEAD_LETTERED 1", sql.query("SELECT state || ' ' || attempts FROM old_keys"
                + " WHERE scoped_key = 's:poison'"), "the widened constraint takes the new states");
        assertEquals("old_keys_claims", sql.query("SELECT indexname FROM pg_indexes WHERE tablename = 'old_keys'"
                + " AND indexdef LIKE '%WHERE%CLAIMED%'"));
    }
}
