package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * {@code key-storage=digest} on the memory store: the store holds a keyed digest of each key, never the key, and a
 * duplicate is still found by it.
 */
class DigestKeysMemoryStoreTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "customers" }, new String[0], Consumer.class)
            .overrideConfigKey("quarkus.idempotency.key-storage", "digest")
            .overrideConfigKey("quarkus.idempotency.key-digest-secret", "a secret of at least thirty-two characters");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumer consumer;

    @Inject
    IdempotencyStore store;

    @Test
    void theStoreHoldsDigestsAndFindsDuplicatesByThem() {
        for (int i = 0; i < 2; i++) {
            Delivered<String> d = Delivered.withId("customer@example.com", "welcome");
            connector.source("customers").send(d.message());
            await().atMost(Duration.ofSeconds(10)).until(d::settled);
            assertEquals(1, d.acks(), "acked: " + d);
        }
        assertEquals(1, consumer.welcomed.get(), "the duplicate was found by its digest");
        InMemoryIdempotencyStore memory = (InMemoryIdempotencyStore) store;
        assertEquals(1, memory.size());
        ScopedKey stored = memory.describe().keySet().iterator().next();
        assertEquals("customers", stored.scope());
        assertTrue(stored.key().startsWith("hmac:"), stored.key());
        assertFalse(stored.key().contains("example"), "the key itself is not kept: " + stored.key());
    }

    @Singleton
    public static class Consumer {
        final AtomicInteger welcomed = new AtomicInteger();

        @Incoming("customers")
        @Idempotent
        void welcome(String message) {
            welcomed.incrementAndGet();
        }
    }
}
