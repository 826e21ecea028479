package io.quarkiverse.idempotency.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The tests' PostgreSQL (database jdbc_test, created afresh once per test JVM) and RabbitMQ: the servers
 * {@code TEST_POSTGRES} and {@code TEST_RABBITMQ} name, or containers.
 */
final class JdbcServices {

    static final String DATABASE = "jdbc_test";

    private JdbcServices() {
    }

    /** @return the application with the module's configuration and the tests' servers */
    static QuarkusUnitTest configure(QuarkusUnitTest app) {
        TestServices.Server db = TestServices.freshDatabase(DATABASE);
        app.withConfigurationResource("application.properties")
                .overrideConfigKey("quarkus.datasource.jdbc.url", db.jdbcUrl(DATABASE))
                .overrideConfigKey("quarkus.datasource.username", db.user())
                .overrideConfigKey("quarkus.datasource.password", db.password());
        TestServices.rabbitmqSettings().forEach(app::overrideConfigKey);
        return app;
    }

    /** @return a connection of the test's own to the application's database */
    static Connection connect() throws SQLException {
        TestServices.Server db = TestServices.postgres();
        return DriverManager.getConnection(db.jdbcUrl(DATABASE), db.user(), db.password());
    }
}
