package io.quarkiverse.idempotency.test.rabbitmq;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.test.support.DelegatingStore;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The outcome mapping on the real RabbitMQ (the tests' broker, see TestServices): a
 * message without a key is dead-lettered; a message that meets a broken store is requeued and, once the store is
 * back, handled once.
 */
class RabbitMQOutcomesTest {

    static final String KEYS_QUEUE = "idempotency-test-keys";
    static final String OUTAGE_QUEUE = "idempotency-test-outage";

    @RegisterExtension
    static final QuarkusUnitTest APP = new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(Consumers.class, SwitchableStore.class, DelegatingStore.class))
            .overrideConfigKey("quarkus.devservices.enabled", "false")
            .overrideConfigKey("quarkus.datasource.active", "false")
            .overrideConfigKey("quarkus.hibernate-orm.active", "false")
            .overrideConfigKey("quarkus.idempotency.store", "memory")
            .overrideConfigKey("quarkus.idempotency.requeue-delay", "200ms")
            // the redelivery must reach the store, which counts it
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0")
            .overrideConfigKey("rabbitmq-host", TestServices.rabbitmq().host())
            .overrideConfigKey("rabbitmq-port", String.valueOf(TestServices.rabbitmq().port()))
            .overrideConfigKey("rabbitmq-username", TestServices.rabbitmq().user())
            .overrideConfigKey("rabbitmq-password", TestServices.rabbitmq().password())
            .overrideConfigKey("mp.messaging.incoming.keys.connector", "smallrye-rabbitmq")
            .overrideConfigKey("mp.messaging.incoming.keys.queue.name", KEYS_QUEUE)
            .overrideConfigKey("mp.messaging.incoming.keys.exchange.name", KEYS_QUEUE)
            .overrideConfigKey("mp.messaging.incoming.keys.auto-bind-dlq", "true")
            .overrideConfigKey("mp.messaging.incoming.keys.dlx.declare", "true")
            .overrideConfigKey("mp.messaging.incoming.outage.connector", "smallrye-rabbitmq")
            .overrideConfigKey("mp.messaging.incoming.outage.queue.name", OUTAGE_QUEUE)
            .overrideConfigKey("mp.messaging.incoming.outage.exchange.name", OUTAGE_QUEUE)
            .overrideConfigKey("mp.messaging.incoming.outage.auto-bind-dlq", "true")
            .overrideConfigKey("mp.messaging.incoming.outage.dlx.declare", "true");

    static Connection connection;
    static Channel amqp;

    @Inject
    Consumers consumers;

    @Inject
    SwitchableStore store;

    @BeforeAll
    static void connect() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(TestServices.rabbitmq().host());
        factory.setPort(TestServices.rabbitmq().port());
        factory.setUsername(TestServices.rabbitmq().user());
        factory.setPassword(TestServices.rabbitmq().password());
        connection = factory.newConnection("idempotency-test");
        // The connector declares the queues once it has connected; leftovers of an earlier run are purged.
        for (String queue : new String[] { KEYS_QUEUE, OUTAGE_QUEUE, KEYS_QUEUE + ".dlq", OUTAGE_QUEUE + ".dlq" }) {
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                try (Channel channel = connection.createChannel()) {
                    channel.queuePurge(queue);
                    return true;
                }
            });
        }
        amqp = connection.createChannel();
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @Test
    void missingKeyIsDeadLettered() throws Exception {
        publish(KEYS_QUEUE, null, "no id");
        GetResponse dead = await().atMost(Duration.ofSeconds(20))
                .until(() -> amqp.basicGet(KEYS_QUEUE + ".dlq", true), r -> r != null);
        assertEquals("no id", new String(dead.getBody(), StandardCharsets.UTF_8));
        assertEquals(0, consumers.keys.get(), "a message without a key never runs");

        publish(KEYS_QUEUE, "k-1", "with id");
        await().atMost(Duration.ofSeconds(20)).until(() -> consumers.keys.get() == 1);
        assertEquals(0, amqp.messageCount(KEYS_QUEUE + ".dlq"), "only the keyless message was dead-lettered");
    }

    @Test
    void storeOutageRequeuesThenHandlesOnce() throws Exception {
        store.down = true;
        publish(OUTAGE_QUEUE, "o-1", "charge");
        await().atMost(Duration.ofSeconds(20)).until(() -> store.failedClaims.get() >= 3);
        assertEquals(0, consumers.outage.get(), "not run while the store is down");
        assertNull(amqp.basicGet(OUTAGE_QUEUE + ".dlq", true), "a store failure never dead-letters");

        store.down = false;
        await().atMost(Duration.ofSeconds(20)).until(() -> consumers.outage.get() == 1);
        publish(OUTAGE_QUEUE, "o-1", "charge"); // the broker delivering it again later
        await().atMost(Duration.ofSeconds(20)).until(() -> amqp.messageCount(OUTAGE_QUEUE) == 0
                && store.duplicateClaims.get() == 1);
        assertEquals(1, consumers.outage.get(), "handled once");
        assertEquals(0, amqp.messageCount(OUTAGE_QUEUE + ".dlq"));
    }

    private static void publish(String queue, String messageId, String body) throws Exception {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType("text/plain")
                .messageId(messageId).deliveryMode(2).headers(Map.of()).build();
        amqp.basicPublish("", queue, properties, body.getBytes(StandardCharsets.UTF_8));
    }

    @Singleton
    public static class Consumers {
        final AtomicInteger keys = new AtomicInteger();
        final AtomicInteger outage = new AtomicInteger();

        @Incoming("keys")
        @Idempotent
        void keys(String payload) {
            keys.incrementAndGet();
        }

        @Incoming("outage")
        @Idempotent
        void outage(String payload) {
            outage.incrementAndGet();
        }
    }

    @Singleton
    public static class SwitchableStore extends DelegatingStore {
        final AtomicInteger failedClaims = new AtomicInteger();
        final AtomicInteger duplicateClaims = new AtomicInteger();
        volatile boolean down;

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            if (down) {
                failedClaims.incrementAndGet();
                throw new IllegalStateException("connection refused");
            }
            Claim result = super.claim(key, token, lease, retention);
            if (result.result() == ClaimResult.DONE) {
                duplicateClaims.incrementAndGet();
            }
            return result;
        }

    }
}
