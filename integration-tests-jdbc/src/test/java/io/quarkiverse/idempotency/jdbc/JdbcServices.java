package io.quarkiverse.idempotency.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The tests' PostgreSQL (database jdbc_test, created afresh once per test JVM) and RabbitMQ: the servers
 * {@code TEST_POSTGRES} and {@code TEST_RABBITMQ} name, or containers.
 */
final class JdbcServices {

    static final String DATABASE = "jdbc_test";
    /** A system property: each application's class loader has a copy of this class, the JVM one set of properties. */
    private static final String CREATED = "idempotency.jdbc-tests.database-created";

    private JdbcServices() {
    }

    /** @return the application with the module's configuration and the tests' servers */
    static QuarkusUnitTest configure(QuarkusUnitTest app) {
        app.withConfigurationResource("application.properties");
        settings().forEach(app::overrideConfigKey);
        return app;
    }

    /** @return a connection of the test's own to the application's database */
    static Connection connect() throws SQLException {
        TestServices.Server db = TestServices.postgres();
        return DriverManager.getConnection(db.jdbcUrl(DATABASE), db.user(), db.password());
    }

    private static synchronized Map<String, String> settings() {
        TestServices.Server db = TestServices.postgres();
        TestServices.Server broker = TestServices.rabbitmq();
        if (System.getProperty(CREATED) == null) {
            System.setProperty(CREATED, "true");
            try (Connection c = DriverManager.getConnection(db.jdbcUrl("postgres"), db.user(), db.password());
                    Statement statement = c.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
                statement.execute("CREATE DATABASE " + DATABASE);
            } catch (SQLException e) {
                throw new IllegalStateException("Could not create the database " + DATABASE, e);
            }
        }
        return Map.of("quarkus.datasource.jdbc.url", db.jdbcUrl(DATABASE),
                "quarkus.datasource.username", db.user(),
                "quarkus.datasource.password", db.password(),
                "rabbitmq-host", broker.host(),
                "rabbitmq-port", String.valueOf(broker.port()),
                "rabbitmq-username", broker.user(),
                "rabbitmq-password", broker.password());
    }
}
