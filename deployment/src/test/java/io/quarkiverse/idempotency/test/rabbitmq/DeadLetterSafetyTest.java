package io.quarkiverse.idempotency.test.rabbitmq;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Dead letters on the real RabbitMQ are safe before the original goes: the copy is published with publisher confirms
 * and as mandatory, and the original acknowledged only once the broker routed and took the copy (a dead-letter queue
 * that cannot take it leaves the message in its queue, to be dead-lettered once it can); the copy carries no
 * per-message expiration (it would expire out of the dead-letter queue); and a dead-lettered key stays dead-lettered,
 * with its original reason, until it is released.
 */
class DeadLetterSafetyTest {

    static final String ROUTED = "idempotency-test-dl-routing";
    static final String POISON = "idempotency-test-dl-sticky";

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.app(new String[] { ROUTED, POISON }, Consumers.class)
            .overrideConfigKey("quarkus.idempotency.requeue-delay", "300ms")
            .overrideConfigKey("quarkus.idempotency.retry.max-attempts", "2")
            .overrideConfigKey("quarkus.idempotency.retry.initial-delay", "100ms");

    static Connection connection;
    static Channel amqp;

    @Inject
    Consumers consumers;

    @Inject
    DeadLetters deadLetters;

    @BeforeAll
    static void connect() throws Exception {
        connection = RabbitApps.connect();
        RabbitApps.purge(connection, ROUTED, ROUTED + ".dlq", POISON, POISON + ".dlq");
        amqp = connection.createChannel();
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @Test
    void aDeadLetterTheBrokerCannotRouteIsNotLostAndIsDeadLetteredOnceItCan() throws Exception {
        amqp.queueUnbind(ROUTED + ".dlq", "DLX", ROUTED);
        try {
            publish(ROUTED, null, null, "no key: dead-lettered at once");
            Thread.sleep(2_000);
            assertEquals(0, amqp.messageCount(ROUTED + ".dlq"), "nowhere to go yet");
        } finally {
            amqp.queueBind(ROUTED + ".dlq", "DLX", ROUTED);
        }
        GetResponse dead = RabbitApps.next(amqp, ROUTED + ".dlq", Duration.ofSeconds(20));
        assertEquals("no key: dead-lettered at once", RabbitApps.body(dead), "kept until it could be dead-lettered");
        assertEquals("key-missing", RabbitApps.header(dead, "x-idempotency-outcome"));
    }

    @Test
    void aDeadLetterCarriesNoExpiration() throws Exception {
        publish(ROUTED, null, "600000", "keyless, with an expiration");
        GetResponse dead = RabbitApps.next(amqp, ROUTED + ".dlq", Duration.ofSeconds(20));
        assertEquals("keyless, with an expiration", RabbitApps.body(dead));
        assertNull(dead.getProps().getExpiration(), "a dead letter must not expire out of the dead-letter queue");
    }

    @Test
    void aDeadLetteredKeyStaysDeadLetteredUntilReleased() throws Exception {
        publish(POISON, "p-1", null, "poison");
        GetResponse first = RabbitApps.next(amqp, POISON + ".dlq", Duration.ofSeconds(20));
        assertEquals("2", RabbitApps.header(first, "x-idempotency-attempts"));
        assertEquals(2, consumers.poisonRuns.get());

        publish(POISON, "p-1", null, "poison, replayed");
        GetResponse again = RabbitApps.next(amqp, POISON + ".dlq", Duration.ofSeconds(20));
        assertEquals("poison, replayed", RabbitApps.body(again));
        assertEquals(2, consumers.poisonRuns.get(), "dead-lettered again at once: no new budget, not run");
        assertEquals("java.lang.IllegalStateException: poison", RabbitApps.header(again, "x-idempotency-reason"),
                "with the original reason");
        assertEquals("java.lang.IllegalStateException", RabbitApps.header(again, "x-idempotency-exception"));

        assertTrue(deadLetters.release(POISON, "p-1"), "an operator fixed the cause and releases the key");
        consumers.healed = true;
        publish(POISON, "p-1", null, "poison, replayed after the fix");
        await().atMost(Duration.ofSeconds(20)).until(() -> consumers.poisonHandled.get() == 1);
        assertEquals(3, consumers.poisonRuns.get(), "the replay ran, with a fresh budget");
        assertEquals(0, amqp.messageCount(POISON + ".dlq"));
    }

    private static void publish(String queue, String messageId, String expiration, String body) throws Exception {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType("text/plain")
                .messageId(messageId).expiration(expiration).deliveryMode(2).headers(Map.of()).build();
        amqp.basicPublish("", queue, properties, body.getBytes(StandardCharsets.UTF_8));
    }

    @Singleton
    public static class Consumers {
        final AtomicInteger poisonRuns = new AtomicInteger();
        final AtomicInteger poisonHandled = new AtomicInteger();
        volatile boolean healed;

        @Incoming(ROUTED)
        @Idempotent
        void routed(String payload) {
        }

        @Incoming(POISON)
        @Idempotent
        void poison(String payload) {
            poisonRuns.incrementAndGet();
            if (!healed) {
                throw new IllegalStateException("poison");
            }
            poisonHandled.incrementAndGet();
        }
    }
}
