package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.Idempotency;
import io.quarkiverse.idempotency.KeyMissingException;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * The programmatic form has the annotation's semantics.
 */
class ProgrammaticFormTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "composed", "keyed" }, new String[0],
            Pipeline.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Pipeline pipeline;

    @Test
    void threeDeliveriesThreeAcksOneEffect() {
        for (int i = 0; i < 3; i++) {
            Delivered<String> d = Delivered.withId("c-1", "x");
            connector.source("composed").send(d.message());
            await().until(d::settled);
            assertEquals(1, d.acks());
        }
        assertEquals(1, pipeline.effects.get());
    }

    @Test
    void failureCountsAnAttemptAndTheRetryRuns() {
        Delivered<String> first = Delivered.withId("c-2", "fail-once");
        connector.source("composed").send(first.message());
        await().until(first::settled);
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class, first.nacks().get(0));
        assertEquals("boom", failed.getCause().getMessage(), "the handler's own exception is the cause");
        assertEquals(1, failed.attempt());
        assertTrue(failed.requeue());
        Delivered<String> retry = Delivered.withId("c-2", "fail-once");
        connector.source("composed").send(retry.message());
        await().until(retry::settled);
        assertEquals(1, retry.acks());
    }

    @Test
    void businessKeyAndMissingKey() {
        Delivered<String> a = Delivered.withId("x-1", "A-1");
        Delivered<String> b = Delivered.withId("x-2", "A-1");
        Delivered<String> blank = Delivered.withId("x-3", "");
        for (Delivered<String> d : java.util.List.of(a, b, blank)) {
            connector.source("keyed").send(d.message());
            await().until(d::settled);
        }
        assertEquals(1, a.acks());
        assertEquals(1, b.acks());
        assertEquals(1, pipeline.keyed.get());
        assertInstanceOf(KeyMissingException.class, blank.nacks().get(0));
    }

    @Singleton
    public static class Pipeline {
        final AtomicInteger effects = new AtomicInteger();
        final AtomicInteger keyed = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();

        @Inject
        Idempotency idempotency;

        @Incoming("composed")
        CompletionStage<Void> composed(Message<String> message) {
            return idempotency.handle(message, "composed", payload -> {
                if (payload.equals("fail-once") && failures.getAndIncrement() == 0) {
                    throw new IllegalStateException("boom");
                }
                effects.incrementAndGet();
            });
        }

        @Incoming("keyed")
        CompletionStage<Void> keyed(Message<String> message) {
            return idempotency.handle(message, "keyed", (orderId, metadata) -> orderId.isEmpty() ? null
                    : "charge:" + orderId, orderId -> keyed.incrementAndGet());
        }
    }
}
