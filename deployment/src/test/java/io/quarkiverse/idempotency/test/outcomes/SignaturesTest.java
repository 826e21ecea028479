package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * The guide's spec for every supported shape: the same message delivered three times gives three acks and one effect.
 */
class SignaturesTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(
            new String[] { "void-in", "uni-in", "cs-in", "msg-cs-in", "msg-uni-in", "proc-in", "tx-in" },
            new String[] { "proc-out" }, Consumers.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumers consumers;

    @Test
    void payloadToVoid() {
        assertHandledOnce("void-in", consumers.voids::get);
    }

    @Test
    void payloadToUni() {
        assertHandledOnce("uni-in", consumers.unis::get);
    }

    @Test
    void payloadToCompletionStage() {
        assertHandledOnce("cs-in", consumers.stages::get);
    }

    @Test
    void messageToCompletionStage() {
        assertHandledOnce("msg-cs-in", consumers.messageStages::get);
    }

    @Test
    void messageToUni() {
        assertHandledOnce("msg-uni-in", consumers.messageUnis::get);
    }

    @Test
    void transactionalPayloadToVoid() {
        assertHandledOnce("tx-in", consumers.transactional::get);
    }

    @Test
    void processorEmitsOnceAndDuplicatesEmitNothing() {
        assertHandledOnce("proc-in", consumers.processed::get);
        List<? extends Message<Object>> emitted = connector.sink("proc-out").received();
        assertEquals(1, emitted.size(), "a duplicate emits nothing");
        assertEquals("A-1!", emitted.get(0).getPayload());
    }

    private void assertHandledOnce(String channel, Supplier<Integer> effects) {
        for (int attempt = 1; attempt <= 3; attempt++) {
            int i = attempt - 1;
            Delivered<String> delivery = Delivered.withId("m-" + channel, "A-1");
            connector.source(channel).send(delivery.message());
            await().until(delivery::settled);
            assertEquals(1, delivery.acks(), "delivery " + (i + 1) + " acked: " + delivery);
            assertTrue(delivery.nacks().isEmpty(), () -> "delivery " + (i + 1) + " nacked: " + delivery);
        }
        assertEquals(1, effects.get(), "three deliveries, one effect");
    }

    // @Singleton: the test reads the counters' fields, which a client proxy would not have
    @Singleton
    public static class Consumers {

        final AtomicInteger voids = new AtomicInteger();
        final AtomicInteger unis = new AtomicInteger();
        final AtomicInteger stages = new AtomicInteger();
        final AtomicInteger messageStages = new AtomicInteger();
        final AtomicInteger messageUnis = new AtomicInteger();
        final AtomicInteger processed = new AtomicInteger();
        final AtomicInteger transactional = new AtomicInteger();

        @Incoming("void-in")
        @Idempotent
        void onVoid(String payload) {
            voids.incrementAndGet();
        }

        @Incoming("uni-in")
        @Idempotent
        @Blocking
        Uni<Void> onUni(String payload) {
            unis.incrementAndGet();
            return Uni.createFrom().voidItem();
        }

        @Incoming("cs-in")
        @Idempotent
        @Blocking
        CompletionStage<Void> onStage(String payload) {
            stages.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }

        @Incoming("msg-cs-in")
        @Idempotent
        @Blocking
        CompletionStage<Void> onMessageStage(Message<String> message) {
            messageStages.incrementAndGet();
            return message.ack();
        }

        @Incoming("msg-uni-in")
        @Idempotent
        @Blocking
        Uni<Void> onMessageUni(Message<String> message) {
            messageUnis.incrementAndGet();
            return Uni.createFrom().completionStage(message::ack);
        }

        @Incoming("proc-in")
        @Outgoing("proc-out")
        @Idempotent
        String process(String payload) {
            processed.incrementAndGet();
            return payload + "!";
        }

        @Incoming("tx-in")
        @Idempotent
        @Transactional
        void onTransactional(String payload) {
            transactional.incrementAndGet();
        }
    }
}
