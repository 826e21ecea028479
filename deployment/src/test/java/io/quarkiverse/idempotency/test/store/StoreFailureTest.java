package io.quarkiverse.idempotency.test.store;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.StoreUnavailableException;
import io.quarkiverse.idempotency.test.support.DelegatingStore;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A store that fails at claim time: the handler does not run and the message is retried, never dead-lettered; a store
 * that fails while a failed attempt is counted: requeued, never dead-lettered, even on the last attempt of the budget.
 * Also shows that an application's own store bean replaces the built-in one.
 */
class StoreFailureTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "orders" }, new String[0],
            Consumer.class, SwitchableStore.class, DelegatingStore.class)
            .overrideConfigKey("quarkus.idempotency.retry.max-attempts", "3");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumer consumer;

    @Inject
    SwitchableStore store;

    @BeforeEach
    void healthy() {
        store.down = false;
        store.countingDown = false;
        consumer.fail = false;
        consumer.handled.set(0);
    }

    @Test
    void storeDownAtClaimTimeRetriesWithoutRunning() {
        store.down = true;
        Delivered<String> duringOutage = Delivered.withId("s-1", "x");
        connector.source("orders").send(duringOutage.message());
        await().until(duringOutage::settled);
        assertEquals(0, duringOutage.acks());
        StoreUnavailableException failure = assertInstanceOf(StoreUnavailableException.class,
                duringOutage.nacks().get(0));
        assertTrue(failure.requeue(), "the store is broken, not the message: requeued");
        assertEquals(0, consumer.handled.get(), "not run while the store is down");

        store.down = false;
        Delivered<String> afterRecovery = Delivered.withId("s-1", "x");
        connector.source("orders").send(afterRecovery.message());
        await().until(afterRecovery::settled);
        assertEquals(1, afterRecovery.acks());
        assertEquals(1, consumer.handled.get(), "handled once after recovery");
    }

    @Test
    void storeDownWhileTheLastAttemptIsCountedRequeuesNeverDeadLetters() {
        // two attempts already failed; the budget is 3
        store.recordFailure(new ScopedKey("orders", "s-2"), "earlier#1", "declined", 3, Duration.ofHours(1));
        store.recordFailure(new ScopedKey("orders", "s-2"), "earlier#2", "declined", 3, Duration.ofHours(1));
        consumer.fail = true;
        store.countingDown = true;
        Delivered<String> lastAttempt = Delivered.withId("s-2", "x");
        connector.source("orders").send(lastAttempt.message());
        await().until(lastAttempt::settled);
        StoreUnavailableException failure = assertInstanceOf(StoreUnavailableException.class,
                lastAttempt.nacks().get(0), "the attempt could not be counted: the store failed, not the message");
        assertTrue(failure.requeue(), "requeued, never dead-lettered: store failures never spend the budget");

        store.countingDown = false;
        consumer.fail = false;
        Delivered<String> retry = Delivered.withId("s-2", "x");
        connector.source("orders").send(retry.message());
        await().until(retry::settled);
        assertEquals(1, retry.acks(), "the uncounted attempt is tried again, within the budget");
    }

    @Singleton
    public static class Consumer {
        final AtomicInteger handled = new AtomicInteger();
        volatile boolean fail;

        @Incoming("orders")
        @Idempotent
        void handle(String payload) {
            if (fail) {
                throw new IllegalStateException("declined");
            }
            handled.incrementAndGet();
        }
    }

    @Singleton
    public static class SwitchableStore extends DelegatingStore {
        volatile boolean down;
        volatile boolean countingDown;

        @Override
        public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
            if (countingDown) {
                throw new IllegalStateException("connection refused");
            }
            return super.recordFailure(key, token, failure, maxAttempts, retention);
        }

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            if (down) {
                throw new IllegalStateException("connection refused");
            }
            return super.claim(key, token, lease, retention);
        }

    }
}
