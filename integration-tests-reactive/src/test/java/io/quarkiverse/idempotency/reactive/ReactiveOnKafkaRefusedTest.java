package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;

/**
 * Kafka retries a record in place, waiting on the handler's thread, which an event loop must not do: a
 * {@code @WithTransaction} consumer of a Kafka channel is refused at startup, saying so (a consumer on the event loop
 * without a transaction is too: KafkaEventLoopRefusedTest). No Kafka broker is needed: startup fails before the
 * connector connects.
 */
class ReactiveOnKafkaRefusedTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveApps.withServices(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(KafkaConsumers.class, ReactiveCharge.class, OrderIdKey.class, ReactiveApps.class,
                            ReactiveServices.class)
                    .addAsResource("db/migration/V1__charges.sql"))
            .overrideConfigKey("kafka.bootstrap.servers", "127.0.0.1:1")
            .overrideConfigKey("mp.messaging.incoming.kafka-reactive.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.kafka-reactive.value.deserializer",
                    "io.quarkus.kafka.client.serialization.JsonObjectDeserializer")
            .assertException(t -> {
                String messages = messages(t);
                if (!messages.contains("runs in a Hibernate Reactive transaction (@WithTransaction) on its event loop,"
                        + " but its channel kafka-reactive retries failed deliveries in place (Kafka)")) {
                    throw new AssertionError("expected the Kafka refusal, found: " + messages, t);
                }
            }));

    @Test
    void startupFails() {
        fail("startup must fail");
    }

    private static String messages(Throwable t) {
        StringBuilder all = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            all.append(c.getMessage()).append('\n');
        }
        return all.toString();
    }

    @ApplicationScoped
    public static class KafkaConsumers {

        @Incoming("kafka-reactive")
        @Idempotent(key = OrderIdKey.class)
        @WithTransaction
        public Uni<Void> charge(JsonObject payment) {
            return ReactiveCharge.of(payment.getString("orderId"), 1, "kafka").persist().replaceWithVoid();
        }
    }
}
