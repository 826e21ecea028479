package io.quarkiverse.idempotency.test.rabbitmq;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkus.test.QuarkusUnitTest;
import io.vertx.core.json.JsonObject;

/**
 * Recoverability on the real RabbitMQ: a failing handler is retried after growing delays within its attempt budget,
 * then dead-lettered with the reason in the dead letter's headers; a payload the method cannot receive, and one its key
 * function cannot read, are dead-lettered at once; the logs stay bounded.
 */
class RetryBudgetTest {

    static final String POISON = "idempotency-test-poison";
    static final String FLAKY = "idempotency-test-flaky";
    static final String TYPED = "idempotency-test-typed";

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.app(new String[] { POISON, FLAKY, TYPED }, Consumers.class,
            StrictKey.class)
            .overrideConfigKey("quarkus.idempotency.retry.max-attempts", "3")
            .overrideConfigKey("quarkus.idempotency.retry.initial-delay", "300ms")
            .overrideConfigKey("quarkus.idempotency.retry.jitter", "0")
            .overrideConfigKey("quarkus.idempotency.channels.\"" + FLAKY + "\".retry.max-attempts", "4")
            .setLogRecordPredicate(r -> r.getLoggerName().startsWith("io.quarkiverse.idempotency")
                    || r.getLoggerName().startsWith("io.smallrye.reactive.messaging"))
            .assertLogRecords(records -> {
                long stackTraces = records.stream().filter(r -> r.getThrown() != null).count();
                assertTrue(stackTraces <= 6, "a stack trace only for the last attempt of a spent budget, not per"
                        + " retry: " + stackTraces);
                assertTrue(records.stream().noneMatch(r -> r.getMessage() != null && r.getMessage().contains("SRMSG00200")),
                        "the provider's per-failure error is not logged for the extension's outcomes");
            });

    static Connection connection;
    static Channel amqp;

    @Inject
    Consumers consumers;

    @BeforeAll
    static void connect() throws Exception {
        connection = RabbitApps.connect();
        RabbitApps.purge(connection, POISON, POISON + ".dlq", FLAKY, FLAKY + ".dlq", TYPED, TYPED + ".dlq");
        amqp = connection.createChannel();
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @Test
    void aPoisonMessageIsRetriedWithGrowingDelaysThenDeadLetteredWithTheReason() throws Exception {
        RabbitApps.publish(amqp, POISON, "p-1", "text/plain", "always fails");
        GetResponse dead = RabbitApps.next(amqp, POISON + ".dlq", Duration.ofSeconds(30));
        assertEquals(3, consumers.poisonAttempts.size(), "the budget: 3 attempts");
        long firstGap = TimeUnit.NANOSECONDS.toMillis(consumers.poisonAttempts.get(1) - consumers.poisonAttempts.get(0));
        long secondGap = TimeUnit.NANOSECONDS.toMillis(consumers.poisonAttempts.get(2) - consumers.poisonAttempts.get(1));
        assertTrue(firstGap >= 300, "first retry after the initial delay: " + firstGap + " ms");
        assertTrue(secondGap >= 600, "then twice as long: " + secondGap + " ms");

        assertEquals("always fails", RabbitApps.body(dead), "the message itself");
        assertEquals("p-1", dead.getProps().getMessageId(), "with its properties");
        assertEquals("dead-lettered", RabbitApps.header(dead, "x-idempotency-outcome"));
        assertEquals("java.lang.IllegalStateException: card declined for always fails",
                RabbitApps.header(dead, "x-idempotency-reason"));
        assertEquals("java.lang.IllegalStateException", RabbitApps.header(dead, "x-idempotency-exception"));
        assertEquals("3", RabbitApps.header(dead, "x-idempotency-attempts"));
        assertEquals(POISON + ":p-1", RabbitApps.header(dead, "x-idempotency-key"));
        assertEquals(POISON, RabbitApps.header(dead, "x-idempotency-channel"));
        await().during(Duration.ofSeconds(1)).until(() -> consumers.poisonAttempts.size() == 3);
        assertEquals(0, amqp.messageCount(POISON), "nothing left to retry");
    }

    @Test
    void aTransientFailureIsRetriedAndHandledOnceAndTheChannelsBudgetApplies() throws Exception {
        consumers.flakyFailures.set(3); // within this channel's budget of 4, over the global 3
        RabbitApps.publish(amqp, FLAKY, "f-1", "text/plain", "flaky");
        await().atMost(Duration.ofSeconds(30)).until(() -> consumers.flakyHandled.get() == 1);
        assertEquals(4, consumers.flakyRuns.get());
        await().during(Duration.ofSeconds(1)).until(() -> consumers.flakyHandled.get() == 1);
        assertNull(amqp.basicGet(FLAKY + ".dlq", true), "not dead-lettered");
    }

    @Test
    void aPayloadTheMethodCannotReceiveIsDeadLetteredAtOnce() throws Exception {
        // a JSON array where the method takes a JSON object: SmallRye cannot call it
        RabbitApps.publish(amqp, TYPED, "t-1", "application/json", "[1, 2]");
        GetResponse dead = RabbitApps.next(amqp, TYPED + ".dlq", Duration.ofSeconds(20));
        assertEquals("unreadable", RabbitApps.header(dead, "x-idempotency-outcome"));
        assertTrue(RabbitApps.header(dead, "x-idempotency-reason").contains("ClassCastException"),
                RabbitApps.header(dead, "x-idempotency-reason"));
        assertEquals(0, consumers.typedRuns.get(), "never reached the method");

        // an object its key function cannot read: rejected by the key function, at once
        RabbitApps.publish(amqp, TYPED, "t-2", "application/json", "{\"orderId\": 42}");
        GetResponse keyless = RabbitApps.next(amqp, TYPED + ".dlq", Duration.ofSeconds(20));
        assertEquals("key-missing", RabbitApps.header(keyless, "x-idempotency-outcome"));
        assertTrue(RabbitApps.header(keyless, "x-idempotency-reason").contains("t-2"), "names the message id");

        RabbitApps.publish(amqp, TYPED, "t-3", "application/json", "{\"orderId\": \"A-1\"}");
        await().atMost(Duration.ofSeconds(20)).until(() -> consumers.typedRuns.get() == 1);
        assertEquals(0, amqp.messageCount(TYPED + ".dlq"), "good traffic flows");
    }

    public static class StrictKey implements KeyFunction<JsonObject> {
        @Override
        public String key(JsonObject order, Metadata metadata) {
            if (!(order.getValue("orderId") instanceof String id)) {
                throw new IllegalArgumentException("orderId is not a string: " + order.getValue("orderId"));
            }
            return "order:" + id;
        }
    }

    @Singleton
    public static class Consumers {
        final List<Long> poisonAttempts = new CopyOnWriteArrayList<>();
        final AtomicInteger flakyFailures = new AtomicInteger();
        final AtomicInteger flakyRuns = new AtomicInteger();
        final AtomicInteger flakyHandled = new AtomicInteger();
        final AtomicInteger typedRuns = new AtomicInteger();

        @Incoming(POISON)
        @Idempotent
        void poison(String payload) {
            poisonAttempts.add(System.nanoTime());
            throw new IllegalStateException("card declined for " + payload);
        }

        @Incoming(FLAKY)
        @Idempotent
        void flaky(String payload) {
            flakyRuns.incrementAndGet();
            if (flakyFailures.getAndDecrement() > 0) {
                throw new IllegalStateException("provider unavailable");
            }
            flakyHandled.incrementAndGet();
        }

        @Incoming(TYPED)
        @Idempotent(key = StrictKey.class)
        void typed(JsonObject order) {
            typedRuns.incrementAndGet();
        }
    }
}
