package io.quarkiverse.idempotency.reactiveonly;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * The tests' PostgreSQL (database reactive_only_test, created afresh, reached by the application through the reactive
 * client only) and RabbitMQ: the servers {@code TEST_POSTGRES} and {@code TEST_RABBITMQ} name, or containers.
 */
public class ReactiveOnlyServices implements QuarkusTestResourceLifecycleManager {

    static final String DATABASE = "reactive_only_test";

    @Override
    public Map<String, String> start() {
        TestServices.Server db = TestServices.postgres();
        TestServices.Server broker = TestServices.rabbitmq();
        try (Connection c = DriverManager.getConnection(db.jdbcUrl("postgres"), db.user(), db.password());
                Statement statement = c.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
            statement.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            throw new IllegalStateException("Could not create the database " + DATABASE, e);
        }
        return Map.of("quarkus.datasource.reactive.url", "postgresql://" + db.host() + ":" + db.port() + "/" + DATABASE,
                "quarkus.datasource.username", db.user(),
                "quarkus.datasource.password", db.password(),
                "rabbitmq-host", broker.host(),
                "rabbitmq-port", String.valueOf(broker.port()),
                "rabbitmq-username", broker.user(),
                "rabbitmq-password", broker.password());
    }

    @Override
    public void stop() {
    }
}
