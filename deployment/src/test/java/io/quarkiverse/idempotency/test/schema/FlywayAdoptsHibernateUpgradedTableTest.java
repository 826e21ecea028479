package io.quarkiverse.idempotency.test.schema;

import java.sql.SQLException;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A table that Hibernate ORM's schema update brought forward (new columns, old state constraint) adopted by Flyway
 * with the shipped repeatable migration: the migration drops the constraint although the columns are there, and the
 * store, validating as in production, records dead letters.
 */
class FlywayAdoptsHibernateUpgradedTableTest {

    static final String SCHEMA = "idempotency_flyway_widen";

    static {
        SchemaSql.beforeStart(FlywayAdoptsHibernateUpgradedTableTest.class, () -> {
            SchemaSql.run("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE", "CREATE SCHEMA " + SCHEMA);
            SchemaSql.hibernateUpgraded(SCHEMA, "widened_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.flywayApp(SCHEMA, "widened_keys");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theConstraintIsDroppedAndTheKeysKept() throws SQLException {
        SchemaSql.assertUpToDate(store, new Sql(dataSource), SCHEMA, "widened_keys");
    }
}
