package io.quarkiverse.idempotency.it;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import io.quarkiverse.idempotency.testing.TcpProxy;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Runs the application behind TCP proxies to PostgreSQL and RabbitMQ, which the fault tests cut and restore.
 */
public class ProxiedServices implements QuarkusTestProfile {

    static volatile TcpProxy database;
    static volatile TcpProxy broker;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                // Long enough that the connection drop can happen while busy messages wait.
                "quarkus.idempotency.requeue-delay", "2s",
                "quarkus.datasource.jdbc.acquisition-timeout", "2s",
                "mp.messaging.incoming.payments.reconnect-interval", "1",
                "mp.messaging.incoming.payments-audit.reconnect-interval", "1",
                "mp.messaging.incoming.receipts.reconnect-interval", "1",
                "mp.messaging.outgoing.receipts-out.reconnect-interval", "1",
                // a short lease, renewed by a relay run at least every quarter of it
                "quarkus.idempotency.outbox.lease", "5s",
                "quarkus.idempotency.outbox.relay-every", "1s",
                "demo.gateway.latency", "20ms");
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(Proxies.class));
    }

    public static class Proxies implements QuarkusTestResourceLifecycleManager {

        @Override
        public Map<String, String> start() {
            try {
                database = TcpProxy.inFrontOfDatabase(Ledger.url());
                broker = new TcpProxy(TestServices.rabbitmq().host(), TestServices.rabbitmq().port());
                return Map.of("quarkus.datasource.jdbc.url", database.jdbcUrl(Ledger.url()),
                        "rabbitmq-host", "127.0.0.1",
                        "rabbitmq-port", String.valueOf(broker.port()));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        /** After {@link Services}, whose addresses these replace. */
        @Override
        public int order() {
            return 1;
        }

        @Override
        public void stop() {
            if (database != null) {
                database.close();
            }
            if (broker != null) {
                broker.close();
            }
        }
    }
}
