package io.quarkiverse.idempotency.memory.app;

import java.util.Map;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * Points the packaged application at the tests' RabbitMQ: the one {@code TEST_RABBITMQ} names, or a container (see
 * {@link TestServices}).
 */
public class Broker implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        TestServices.Server broker = TestServices.rabbitmq();
        return Map.of("rabbitmq-host", broker.host(), "rabbitmq-port", String.valueOf(broker.port()),
                "rabbitmq-username", broker.user(), "rabbitmq-password", broker.password());
    }

    @Override
    public void stop() {
        // the broker outlives the application
    }
}
