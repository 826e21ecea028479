package io.quarkiverse.idempotency.jdbc.app;

import java.util.HashMap;
import java.util.Map;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * Points the packaged application at the tests' servers: a fresh database {@value #DATABASE} on the PostgreSQL that
 * {@code TEST_POSTGRES} names, and the RabbitMQ that {@code TEST_RABBITMQ} names (or containers, see
 * {@link TestServices}).
 */
public class Servers implements QuarkusTestResourceLifecycleManager {

    static final String DATABASE = "jdbc_it";

    @Override
    public Map<String, String> start() {
        TestServices.Server db = TestServices.freshDatabase(DATABASE);
        Map<String, String> config = new HashMap<>(TestServices.rabbitmqSettings());
        config.put("quarkus.datasource.jdbc.url", db.jdbcUrl(DATABASE));
        config.put("quarkus.datasource.username", db.user());
        config.put("quarkus.datasource.password", db.password());
        config.put("jdbc.operator-password", "op-secret");
        return config;
    }

    @Override
    public void stop() {
        // the servers outlive the application
    }
}
