package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.MessageConverter;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * The key function receives the payload the method receives, after the application's converters ran, as the build
 * checks it against the method's parameter type: not the connector's raw payload.
 */
class ConvertedPayloadKeyTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "orders" }, new String[0], Consumer.class,
            Order.class, OrderKey.class, OrderConverter.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumer consumer;

    @Test
    void theKeyFunctionSeesTheConvertedPayload() {
        for (String id : new String[] { "m-1", "m-2" }) {
            Delivered<String> d = Delivered.withId(id, "A-1;1299");
            connector.source("orders").send(d.message());
            await().atMost(Duration.ofSeconds(10)).until(d::settled);
            assertEquals(1, d.acks(), "acked, not dead-lettered: " + d);
            assertTrue(d.nacks().isEmpty());
        }
        assertEquals(1, consumer.charged.get(), "the same order under two message ids: charged once");
    }

    public record Order(String id, long amountCents) {
    }

    public static class OrderKey implements KeyFunction<Order> {
        @Override
        public String key(Order order, Metadata metadata) {
            return "charge:" + order.id();
        }
    }

    @ApplicationScoped
    public static class OrderConverter implements MessageConverter {
        @Override
        public boolean canConvert(Message<?> in, Type target) {
            return in.getPayload() instanceof String && target == Order.class;
        }

        @Override
        public Message<?> convert(Message<?> in, Type target) {
            String[] parts = ((String) in.getPayload()).split(";");
            return in.withPayload(new Order(parts[0], Long.parseLong(parts[1])));
        }
    }

    @Singleton
    public static class Consumer {
        final AtomicInteger charged = new AtomicInteger();

        @Incoming("orders")
        @Idempotent(key = OrderKey.class)
        void charge(Order order) {
            charged.incrementAndGet();
        }
    }
}
