package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.test.support.DelegatingStore;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * Duplicates of keys this process confirmed are acked without asking the store; keys it did not confirm (another
 * process's, or failed ones) still go to the store.
 */
class ConfirmedKeysCacheTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "orders" }, new String[0], Consumer.class,
            CountingStore.class, DelegatingStore.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    CountingStore store;

    @Inject
    Consumer consumer;

    @Test
    void duplicatesOfConfirmedKeysSkipTheStore() {
        for (int i = 0; i < 3; i++) {
            Delivered<String> d = Delivered.withId("c-1", "x");
            connector.source("orders").send(d.message());
            await().until(d::settled);
            assertEquals(1, d.acks());
        }
        assertEquals(1, consumer.handled.get());
        assertEquals(1, store.claims.get(), "the two duplicates were answered from the confirmed keys");

        // confirmed by another worker: this process has not seen it, so the store answers
        ScopedKey other = new ScopedKey("orders", "c-2");
        store.delegate().claim(other, "another-process#1", Duration.ofMinutes(1), Duration.ofHours(1));
        store.delegate().confirm(other, "another-process#1", Duration.ofHours(1));
        Delivered<String> d = Delivered.withId("c-2", "x");
        connector.source("orders").send(d.message());
        await().until(d::settled);
        assertEquals(1, d.acks());
        assertEquals(2, store.claims.get());
        assertEquals(1, consumer.handled.get());
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
    public static class CountingStore extends DelegatingStore {
        final AtomicInteger claims = new AtomicInteger();

        InMemoryIdempotencyStore delegate() {
            return delegate;
        }

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            claims.incrementAndGet();
            return super.claim(key, token, lease, retention);
        }

    }
}
