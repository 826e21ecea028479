package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.Flow;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Multi;
import io.smallrye.reactive.messaging.connector.InboundConnector;

/**
 * A channel of a connector whose failure handling the extension cannot drive fails the build, naming the connector
 * and the remedy, rather than starting and acking busy messages.
 */
class UnsupportedConnectorTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.UNSUPPORTED_CONNECTOR,
            "consumes channel 'orders' of connector acme-mq", Consumer.class, AcmeConnector.class)
            .overrideConfigKey("mp.messaging.incoming.orders.connector", "acme-mq");

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("orders")
        @Idempotent
        void handle(String payload) {
        }
    }

    @ApplicationScoped
    @Connector("acme-mq")
    public static class AcmeConnector implements InboundConnector {

        @Override
        public Flow.Publisher<? extends Message<?>> getPublisher(Config config) {
            return Multi.createFrom().empty();
        }
    }
}
