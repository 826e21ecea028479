package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Startup with the table missing fails, and the message names every way to create it, and its statements.
 */
class MissingTableTest {

    static {
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c.getMessage() != null && c.getMessage().contains("The idempotency table 'idempotency_record'"
                            + " does not exist") && c.getMessage().contains("schema-management=update")
                            && c.getMessage().contains("classpath:db/idempotency/flyway")
                            && c.getMessage().contains("db/idempotency/liquibase/idempotency-changelog.xml")
                            && c.getMessage().contains("schema-management.strategy")
                            && c.getMessage().contains("CREATE TABLE IF NOT EXISTS idempotency_record")) {
                        return;
                    }
                }
                throw new AssertionError("expected the missing-table remedy", t);
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
