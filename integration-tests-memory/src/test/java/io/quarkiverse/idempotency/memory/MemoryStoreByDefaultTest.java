package io.quarkiverse.idempotency.memory;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.MessageIdMetadata;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * Without Hibernate ORM (and without JTA) the in-memory store is selected, and @Idempotent works.
 */
class MemoryStoreByDefaultTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(Consumer.class))
            .overrideConfigKey("mp.messaging.incoming.in.connector", "smallrye-in-memory")
            .overrideConfigKey("mp.messaging.incoming.in.run-on-vertx-context", "true");

    @Inject
    IdempotencyStore store;

    @Inject
    Consumer consumer;

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Test
    void memoryStoreIsTheDefaultAndDuplicatesAreDropped() {
        assertInstanceOf(InMemoryIdempotencyStore.class, store);
        AtomicInteger acks = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            connector.source("in").send(Message.of("x", Metadata.of(new MessageIdMetadata("m-1")), () -> {
                acks.incrementAndGet();
                return CompletableFuture.completedFuture(null);
            }));
        }
        await().until(() -> acks.get() == 3);
        assertEquals(1, consumer.handled.get());
    }

    @Singleton
    public static class Consumer {
        final AtomicInteger handled = new AtomicInteger();

        @Incoming("in")
        @Idempotent
        void handle(String payload) {
            handled.incrementAndGet();
        }
    }
}
