package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkiverse.idempotency.KeyMissingException;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * Every outcome row of the contract that needs no database, on the in-memory connector and store.
 */
class OutcomesTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(
            new String[] { "busy-in", "flaky-in", "keyed-in", "plain-in", "fan-a", "fan-b", "rollback-in",
                    "nacking-in" },
            new String[0], Consumers.class, OrderKey.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumers consumers;

    @Test
    void firstDeliveryRunsAndIsAcked() {
        Delivered<String> first = send("plain-in", Delivered.withId("p-1", "x"));
        assertEquals(1, first.acks());
        assertEquals(1, consumers.plain.get());
    }

    @Test
    void duplicateIsAckedWithoutRunning() {
        send("plain-in", Delivered.withId("p-2", "x"));
        int before = consumers.plain.get();
        Delivered<String> duplicate = send("plain-in", Delivered.withId("p-2", "x"));
        assertEquals(1, duplicate.acks(), "a duplicate is the broker doing its job: acked");
        assertTrue(duplicate.nacks().isEmpty());
        assertEquals(before, consumers.plain.get(), "a duplicate does not run");
    }

    @Test
    void secondDeliveryWhileTheFirstRunsIsNeitherAckedNorRun() throws InterruptedException {
        Delivered<String> first = Delivered.withId("b-1", "x");
        connector.source("busy-in").send(first.message());
        assertTrue(consumers.busyStarted.await(10, TimeUnit.SECONDS));

        Delivered<String> second = send("busy-in", Delivered.withId("b-1", "x"));
        assertEquals(0, second.acks(), "a live claim is never treated as a finished message");
        assertEquals(1, second.nacks().size());
        assertInstanceOf(DeliveryInProgressException.class, second.nacks().get(0));
        assertTrue(((IdempotencyException) second.nacks().get(0)).requeue(), "busy is retried later");
        assertFalse(first.settled(), "the first is still running");

        consumers.busyRelease.countDown();
        await().until(first::settled);
        assertEquals(1, first.acks());
        assertEquals(1, consumers.busy.get(), "the handler ran once");

        Delivered<String> third = send("busy-in", Delivered.withId("b-1", "x"));
        assertEquals(1, third.acks(), "after the first finished, the redelivery is a duplicate");
        assertEquals(1, consumers.busy.get());
    }

    @Test
    void handlerFailureCountsAnAttemptSoTheRetryRunsAfterADelay() {
        Delivered<String> first = send("flaky-in", Delivered.withId("f-1", "x"));
        assertEquals(0, first.acks());
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class, first.nacks().get(0));
        assertEquals("boom", failed.getCause().getMessage(), "the handler's own exception is the cause");
        assertTrue(failed.requeue(), "retried");
        assertEquals(1, failed.attempt());
        assertTrue(failed.retryDelay().toMillis() >= 800, "after the first retry delay (1 s, jitter 20%): "
                + failed.retryDelay());

        Delivered<String> retry = send("flaky-in", Delivered.withId("f-1", "x"));
        assertEquals(1, retry.acks(), "the retry really runs");
        assertEquals(2, consumers.flakyAttempts.get());
        assertEquals(1, consumers.flakyEffects.get());

        Delivered<String> duplicate = send("flaky-in", Delivered.withId("f-1", "x"));
        assertEquals(1, duplicate.acks());
        assertEquals(2, consumers.flakyAttempts.get(), "after success the key is a fact");
    }

    @Test
    void rollbackWithoutExceptionIsAFailedAttempt() {
        Delivered<String> first = send("rollback-in", Delivered.withId("r-1", "x"));
        assertEquals(0, first.acks(), "a rolled back transaction is not acked");
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class, first.nacks().get(0));
        assertInstanceOf(HandlerRolledBackException.class, failed.getCause());

        Delivered<String> retry = send("rollback-in", Delivered.withId("r-1", "x"));
        assertEquals(1, retry.acks(), "the claim was forgotten, so the retry runs");
        assertEquals(2, consumers.rollbackAttempts.get());
    }

    @Test
    void messageMethodThatNacksCountsAnAttempt() {
        Delivered<String> first = send("nacking-in", Delivered.withId("n-1", "x"));
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class, first.nacks().get(0));
        assertEquals("refused", failed.getCause().getMessage());
        Delivered<String> retry = send("nacking-in", Delivered.withId("n-1", "x"));
        assertEquals(1, retry.acks());
        assertEquals(2, consumers.nackingAttempts.get());
    }

    @Test
    void missingMessageIdIsRejectedWithoutRunning() {
        int before = consumers.plain.get();
        Delivered<String> keyless = send("plain-in", Delivered.withoutId("x"));
        assertEquals(0, keyless.acks());
        assertInstanceOf(KeyMissingException.class, keyless.nacks().get(0));
        assertFalse(((IdempotencyException) keyless.nacks().get(0)).requeue(), "dead-lettered, not retried");
        assertEquals(before, consumers.plain.get());
    }

    @Test
    void customKeyFunctionDeduplicatesTheBusinessKeyAcrossMessageIds() {
        Delivered<String> first = send("keyed-in", Delivered.withId("k-1", "A-1"));
        Delivered<String> sameOrderNewId = send("keyed-in", Delivered.withId("k-2", "A-1"));
        Delivered<String> otherOrder = send("keyed-in", Delivered.withId("k-3", "A-2"));
        assertEquals(1, first.acks());
        assertEquals(1, sameOrderNewId.acks());
        assertEquals(1, otherOrder.acks());
        assertEquals(2, consumers.keyed.get(), "one charge per order");
    }

    @Test
    void customKeyFunctionFindingNoKeyRejects() {
        Delivered<String> blank = send("keyed-in", Delivered.withId("k-4", " "));
        assertInstanceOf(KeyMissingException.class, blank.nacks().get(0));
        assertTrue(blank.nacks().get(0).getMessage().contains("k-4"), "the reason names the message id");
    }

    @Test
    void scopeDefaultsToTheChannelSoFanOutRunsEachConsumer() {
        Delivered<String> a = send("fan-a", Delivered.withId("same-id", "x"));
        Delivered<String> b = send("fan-b", Delivered.withId("same-id", "x"));
        assertEquals(1, a.acks());
        assertEquals(1, b.acks());
        assertEquals(1, consumers.fanA.get());
        assertEquals(1, consumers.fanB.get());
    }

    private <T> Delivered<T> send(String channel, Delivered<T> delivery) {
        connector.source(channel).send(delivery.message());
        await().until(delivery::settled);
        return delivery;
    }

    public static class OrderKey implements KeyFunction<String> {
        @Override
        public String key(String orderId, Metadata metadata) {
            return orderId.isBlank() ? null : "charge:" + orderId;
        }
    }

    @Singleton
    public static class Consumers {

        final AtomicInteger plain = new AtomicInteger();
        final AtomicInteger busy = new AtomicInteger();
        final CountDownLatch busyStarted = new CountDownLatch(1);
        final CountDownLatch busyRelease = new CountDownLatch(1);
        final AtomicInteger flakyAttempts = new AtomicInteger();
        final AtomicInteger flakyEffects = new AtomicInteger();
        final AtomicInteger keyed = new AtomicInteger();
        final AtomicInteger fanA = new AtomicInteger();
        final AtomicInteger fanB = new AtomicInteger();
        final AtomicInteger rollbackAttempts = new AtomicInteger();
        final AtomicInteger nackingAttempts = new AtomicInteger();

        @Inject
        TransactionSynchronizationRegistry transactions;

        @Incoming("plain-in")
        @Idempotent
        void plain(String payload) {
            plain.incrementAndGet();
        }

        @Incoming("busy-in")
        @Idempotent
        @Blocking(ordered = false)
        void busy(String payload) throws InterruptedException {
            busy.incrementAndGet();
            busyStarted.countDown();
            busyRelease.await(30, TimeUnit.SECONDS);
        }

        @Incoming("flaky-in")
        @Idempotent
        void flaky(String payload) {
            if (flakyAttempts.incrementAndGet() == 1) {
                throw new IllegalStateException("boom");
            }
            flakyEffects.incrementAndGet();
        }

        @Incoming("keyed-in")
        @Idempotent(key = OrderKey.class)
        void keyed(String orderId) {
            keyed.incrementAndGet();
        }

        @Incoming("fan-a")
        @Idempotent
        void fanA(String payload) {
            fanA.incrementAndGet();
        }

        @Incoming("fan-b")
        @Idempotent
        void fanB(String payload) {
            fanB.incrementAndGet();
        }

        @Incoming("rollback-in")
        @Idempotent
        @Transactional
        void rollback(String payload) {
            if (rollbackAttempts.incrementAndGet() == 1) {
                transactions.setRollbackOnly();
            }
        }

        @Incoming("nacking-in")
        @Idempotent
        @Blocking
        CompletionStage<Void> nacking(Message<String> message) {
            if (nackingAttempts.incrementAndGet() == 1) {
                return message.nack(new IllegalArgumentException("refused"));
            }
            return message.ack();
        }
    }
}
