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
import io.quarkiverse.idempotency.runtime.database.DatabaseSchema;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Without Flyway, Liquibase or Hibernate's schema generation, the extension creates its own table at startup
 * (dev and test mode), under a custom name in a schema of its own, which it creates too: no migration version to
 * clash with the application's, no table name fixed by a shipped script.
 */
class SchemaUpdateTest {

    static {
        SchemaSql.beforeStart(SchemaUpdateTest.class,
                () -> SchemaSql.run("DROP SCHEMA IF EXISTS idem_update CASCADE"));
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "idem_update.payment_keys")
            // one table's indexes (DefaultLayoutTest has the default, partitioned, layout)
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    DatabaseSchema schema;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theExtensionCreatedItsTableWithItsIndexesAndUsesIt() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("11", sql.query("SELECT count(*)::text FROM information_schema.columns"
                + " WHERE table_schema = 'idem_update' AND table_name = 'payment_keys'"));
        assertEquals("payment_keys_claims,payment_keys_expires_at,payment_keys_pkey", sql.query(
                "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'idem_update'"));
        ScopedKey key = new ScopedKey("s", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "t#1", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        assertEquals(1, store.recordFailure(key, "t#1", "boom", 1, Duration.ofHours(1)));
        assertEquals("DEAD_LETTERED", sql.query("SELECT state FROM idem_update.payment_keys"));
        schema.updateSchema(); // again: nothing to do, nothing lost
        assertEquals("1", sql.query("SELECT count(*)::text FROM idem_update.payment_keys"));
    }
}
