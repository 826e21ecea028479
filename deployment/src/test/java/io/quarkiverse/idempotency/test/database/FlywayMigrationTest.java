package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The shipped migration, run by Flyway on an empty schema, creates the table the entity maps (Hibernate ORM validates
 * the mapping against it) and the startup check accepts; the store then works on it.
 */
class FlywayMigrationTest {

    static final String SCHEMA = "idempotency_flyway_test";

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.datasource.jdbc.url", TestApps.jdbcUrl() + "?currentSchema=" + SCHEMA)
            .overrideConfigKey("quarkus.flyway.schemas", SCHEMA)
            .overrideConfigKey("quarkus.flyway.clean-disabled", "false")
            .overrideConfigKey("quarkus.flyway.clean-at-start", "true")
            .overrideConfigKey("quarkus.flyway.migrate-at-start", "true")
            .overrideConfigKey("quarkus.flyway.locations", "classpath:db/idempotency/postgresql")
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "validate")
            // the versioned scripts' table as they made it (by default, test mode's schema update would partition it)
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void migrationCreatesTheTableTheEntityAndTheStoreUse() throws SQLException {
        assertEquals("1000,1001,1002,1003", query("SELECT string_agg(version, ',' ORDER BY installed_rank) FROM " + SCHEMA
                + ".flyway_schema_history WHERE success AND version IS NOT NULL"));
        assertEquals("idempotency_record_claims", query("SELECT indexname FROM pg_indexes WHERE schemaname = '"
                + SCHEMA + "' AND indexdef LIKE '%WHERE%CLAIMED%'"));
        assertEquals("idempotency_record_expires_at", query("SELECT indexname FROM pg_indexes WHERE schemaname = '"
                + SCHEMA + "' AND indexdef LIKE '%(expires_at)%'"));
        assertEquals(ClaimResult.NEW,
                store.claim(new ScopedKey("flyway", "k"), "f#1", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        assertEquals("1", query("SELECT count(*)::text FROM " + SCHEMA + ".idempotency_record"));
    }

    private String query(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }
}
