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
 * A store that fails at claim time: the handler does not run and the message is retried, never dead-lettered. Also
 * shows that an application's own store bean replaces the built-in one.
 */
class StoreFailureTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "orders" }, new String[0],
            Consumer.class, SwitchableStore.class, DelegatingStore.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumer consumer;

    @Inject
    SwitchableStore store;

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

    @Singleton
    public static class Consumer {
        final AtomicInteger handled = new AtomicInteger();

        @Incoming("orders")
        @Idempotent
        void handle(String payload) {
            handled.incrementAndGet();
        }
    }

    @Singleton
    public static class SwitchableStore extends DelegatingStore {
        volatile boolean down;

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            if (down) {
                throw new IllegalStateException("connection refused");
            }
            return super.claim(key, token, lease, retention);
        }

    }
}
