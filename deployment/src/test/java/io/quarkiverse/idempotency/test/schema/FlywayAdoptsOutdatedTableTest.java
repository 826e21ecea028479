package io.quarkiverse.idempotency.test.schema;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application that created the table with an earlier version of the extension, and adopts Flyway (baseline on
 * migrate) with the shipped repeatable migration: the table is brought up to date, its keys kept, and the store,
 * validating as in production, takes the new states.
 */
class FlywayAdoptsOutdatedTableTest {

    static final String SCHEMA = "idempotency_flyway_adopt";

    static {
        SchemaSql.beforeStart(FlywayAdoptsOutdatedTableTest.class, () -> {
            List<String> statements = new ArrayList<>(List.of("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE",
                    "CREATE SCHEMA " + SCHEMA, "SET search_path TO " + SCHEMA));
            for (String statement : SchemaSql.FIRST_VERSION) {
                statements.add(statement.replace("%s", "adopted_keys"));
            }
            SchemaSql.run(statements.toArray(String[]::new));
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.flywayApp(SCHEMA, "adopted_keys");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableIsUpToDateAndItsKeysAreKept() throws SQLException {
        SchemaSql.assertUpToDate(store, new Sql(dataSource), SCHEMA, "adopted_keys");
    }
}
