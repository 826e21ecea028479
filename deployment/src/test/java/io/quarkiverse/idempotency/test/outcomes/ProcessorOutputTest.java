package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A processor's key is confirmed only once its output is accepted downstream: when the output is refused, the input
 * is nacked and its redelivery emits again, instead of being taken for a duplicate that emits nothing.
 */
class ProcessorOutputTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "orders" }, new String[0], Pipeline.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Pipeline pipeline;

    @Test
    void aRefusedOutputIsEmittedAgainOnRedelivery() {
        pipeline.refuseNext.set(1);
        Delivered<String> first = send(Delivered.withId("o-1", "A-1"));
        assertEquals(0, first.acks(), "the output was refused downstream: the input is not acked");
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class, first.nacks().get(0));
        assertEquals("downstream refused A-1!", failed.getCause().getMessage());

        Delivered<String> redelivery = send(Delivered.withId("o-1", "A-1"));
        assertEquals(1, redelivery.acks(), "acked once its output was accepted");
        assertEquals(List.of("A-1!"), pipeline.accepted, "the redelivery emitted again, and it was accepted");
        assertEquals(2, pipeline.processed.get());

        Delivered<String> duplicate = send(Delivered.withId("o-1", "A-1"));
        assertEquals(1, duplicate.acks());
        assertEquals(2, pipeline.processed.get(), "once accepted, the key is confirmed: a duplicate emits nothing");
        assertEquals(List.of("A-1!"), pipeline.accepted);
    }

    private Delivered<String> send(Delivered<String> d) {
        connector.source("orders").send(d.message());
        await().atMost(Duration.ofSeconds(10)).until(d::settled);
        return d;
    }

    @Singleton
    public static class Pipeline {
        final AtomicInteger processed = new AtomicInteger();
        final AtomicInteger refuseNext = new AtomicInteger();
        final List<String> accepted = new CopyOnWriteArrayList<>();

        @Incoming("orders")
        @Outgoing("confirmations")
        @Idempotent
        String process(String orderId) {
            processed.incrementAndGet();
            return orderId + "!";
        }

        @Incoming("confirmations")
        void downstream(String confirmation) {
            if (refuseNext.getAndDecrement() > 0) {
                throw new IllegalStateException("downstream refused " + confirmation);
            }
            accepted.add(confirmation);
        }
    }
}
