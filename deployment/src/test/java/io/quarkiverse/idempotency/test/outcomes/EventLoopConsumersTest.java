package io.quarkiverse.idempotency.test.outcomes;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;

/**
 * Methods returning {@code Uni} or {@code CompletionStage} without {@code @Blocking}: they run on the event loop, in
 * lease mode, their store calls made without blocking it (the memory store here; the database store through the
 * reactive PostgreSQL client in the reactive application's tests). Every outcome a blocking method has.
 */
class EventLoopConsumersTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(
            new String[] { "loop-uni", "loop-cs", "loop-busy-a", "loop-busy-b", "loop-fail" }, new String[0], Consumers.class);

    @Inject
    @Connector("smallrye-in-memory")
    io.smallrye.reactive.messaging.memory.InMemoryConnector connector;

    @Inject
    Consumers consumers;

    @Test
    void uniOnTheEventLoopRunsOnceForThreeDeliveries() {
        assertHandledOnce("loop-uni", "u-1", consumers.unis);
    }

    @Test
    void completionStageOnTheEventLoopRunsOnceForThreeDeliveries() {
        assertHandledOnce("loop-cs", "c-1", consumers.stages);
    }

    @Test
    void aSecondDeliveryWhileTheFirstRunsIsBusyAtOnce() throws InterruptedException {
        Delivered<String> first = Delivered.withId("b-1", "x");
        connector.source("loop-busy-a").send(first.message());
        assertTrue(consumers.busyStarted.await(10, TimeUnit.SECONDS));

        // a channel runs one message at a time: the second delivery comes through the other consumer of the scope
        Delivered<String> second = send("loop-busy-b", Delivered.withId("b-1", "x"));
        assertEquals(0, second.acks());
        assertInstanceOf(DeliveryInProgressException.class, second.nacks().get(0));
        assertFalse(first.settled(), "the first is still running");

        consumers.busyRelease.complete(null);
        await().until(first::settled);
        assertEquals(1, first.acks());
        Delivered<String> third = send("loop-busy-b", Delivered.withId("b-1", "x"));
        assertEquals(1, third.acks(), "a duplicate once the first confirmed its key");
        assertEquals(1, consumers.busy.get(), "the handler ran once");
        assertEquals(Set.of(true), consumers.onEventLoop);
    }

    @Test
    void aFailingStageIsRetriedThenDeadLetteredAndStaysSo() {
        Delivered<String> first = send("loop-fail", Delivered.withId("f-1", "x"));
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class, first.nacks().get(0));
        assertTrue(failed.requeue(), "retried");
        assertEquals("poison", failed.getCause().getMessage());

        Delivered<String> second = send("loop-fail", Delivered.withId("f-1", "x"));
        AttemptsExhaustedException spent = assertInstanceOf(AttemptsExhaustedException.class, second.nacks().get(0));
        assertFalse(spent.requeue(), "dead-lettered after its 2 attempts");
        assertEquals(2, consumers.failures.get());

        Delivered<String> republished = send("loop-fail", Delivered.withId("f-1", "x"));
        assertInstanceOf(AttemptsExhaustedException.class, republished.nacks().get(0));
        assertEquals(2, consumers.failures.get(), "a dead-lettered key stays dead-lettered: not run again");
        assertEquals(Set.of(true), consumers.onEventLoop);
    }

    private void assertHandledOnce(String channel, String id, AtomicInteger effects) {
        for (int i = 0; i < 3; i++) {
            Delivered<String> delivery = send(channel, Delivered.withId(id, "x"));
            assertEquals(1, delivery.acks(), "delivery " + (i + 1) + ": " + delivery);
            assertTrue(delivery.nacks().isEmpty(), "delivery " + (i + 1) + ": " + delivery);
        }
        assertEquals(1, effects.get(), "three deliveries, one effect");
        assertEquals(Set.of(true), consumers.onEventLoop, "every method ran on an event loop thread");
    }

    private <T> Delivered<T> send(String channel, Delivered<T> delivery) {
        connector.source(channel).send(delivery.message());
        await().until(delivery::settled);
        return delivery;
    }

    @Singleton
    public static class Consumers {

        final AtomicInteger unis = new AtomicInteger();
        final AtomicInteger stages = new AtomicInteger();
        final AtomicInteger busy = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        final CountDownLatch busyStarted = new CountDownLatch(1);
        final CompletableFuture<Void> busyRelease = new CompletableFuture<>();
        final Set<Boolean> onEventLoop = ConcurrentHashMap.newKeySet();

        @Incoming("loop-uni")
        @Idempotent
        Uni<Void> onUni(String payload) {
            onEventLoop.add(Context.isOnEventLoopThread());
            unis.incrementAndGet();
            return Uni.createFrom().voidItem();
        }

        @Incoming("loop-cs")
        @Idempotent
        CompletionStage<Void> onStage(String payload) {
            onEventLoop.add(Context.isOnEventLoopThread());
            stages.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }

        @Incoming("loop-busy-a")
        @Idempotent(scope = "loop-busy")
        Uni<Void> onBusy(String payload) {
            onEventLoop.add(Context.isOnEventLoopThread());
            busy.incrementAndGet();
            busyStarted.countDown();
            return Uni.createFrom().completionStage(busyRelease);
        }

        @Incoming("loop-busy-b")
        @Idempotent(scope = "loop-busy")
        Uni<Void> onBusyToo(String payload) {
            onEventLoop.add(Context.isOnEventLoopThread());
            busy.incrementAndGet();
            return Uni.createFrom().voidItem();
        }

        @Incoming("loop-fail")
        @Idempotent(maxAttempts = 2)
        Uni<Void> onFail(String payload) {
            onEventLoop.add(Context.isOnEventLoopThread());
            failures.incrementAndGet();
            return Uni.createFrom().failure(new IllegalStateException("poison"));
        }
    }
}
