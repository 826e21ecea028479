package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.OutputNotAcknowledgedException;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A processor whose output is never acknowledged downstream does not hold its key for ever (renewed, so every
 * duplicate is told "busy" for the whole retention): past {@code output-ack-timeout} the attempt fails, counted, and
 * the input comes back; an acknowledgement that arrives after that changes nothing.
 */
class OutputAckTimeoutTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "orders" }, new String[0], Pipeline.class)
            .overrideConfigKey("quarkus.idempotency.output-ack-timeout", "1s");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Pipeline pipeline;

    @Test
    void anOutputNeverAcknowledgedFailsTheAttemptAfterTheTimeout() {
        Delivered<String> input = Delivered.withId("t-1", "A-1");
        long start = System.nanoTime();
        connector.source("orders").send(input.message());
        await().atMost(Duration.ofSeconds(10)).until(input::settled);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMillis >= 900, "not before the timeout: " + tookMillis + " ms");
        assertEquals(0, input.acks());
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class, input.nacks().get(0));
        assertInstanceOf(OutputNotAcknowledgedException.class, failed.getCause());
        assertEquals(1, failed.attempt(), "a counted attempt");

        pipeline.held.get(0).ack(); // too late
        await().during(Duration.ofMillis(500)).until(() -> input.acks() == 0 && input.nacks().size() == 1);

        Delivered<String> redelivery = Delivered.withId("t-1", "A-1");
        pipeline.ackNow = true;
        connector.source("orders").send(redelivery.message());
        await().atMost(Duration.ofSeconds(10)).until(redelivery::settled);
        assertEquals(1, redelivery.acks(), "the redelivery emits again, and its output is acknowledged");
        assertEquals(2, pipeline.processed.get());
    }

    @Singleton
    public static class Pipeline {
        final AtomicInteger processed = new AtomicInteger();
        final List<Message<String>> held = new CopyOnWriteArrayList<>();
        volatile boolean ackNow;

        @Incoming("orders")
        @Outgoing("confirmations")
        @Idempotent
        String process(String orderId) {
            processed.incrementAndGet();
            return orderId + "!";
        }

        @Incoming("confirmations")
        CompletionStage<Void> downstream(Message<String> confirmation) {
            if (ackNow) {
                return confirmation.ack();
            }
            held.add(confirmation); // never acknowledged in time
            return CompletableFuture.completedFuture(null);
        }
    }
}
