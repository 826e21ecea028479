package io.quarkiverse.idempotency.test.rabbitmq;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.awaitility.core.ConditionTimeoutException;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.test.support.DelegatingStore;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * A burst of duplicates of one hot key, as many as the channel's prefetch: each one waits to come back while the key
 * is held. A message waiting to come back does not take a prefetch slot from the messages behind it, and one whose key
 * a delivery of this process holds comes back as soon as that delivery ended, not after the whole requeue delay.
 */
class HotKeyTest {

    static final String HOT = "idempotency-test-hot";
    static final String LOCAL = "idempotency-test-hot-local";
    static final int PREFETCH = 4;
    static final String WAIT_QUEUE = HOT + ".idempotency-wait";

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.app(new String[] { HOT, LOCAL }, Consumers.class, HoldingStore.class,
            DelegatingStore.class)
            .overrideConfigKey("mp.messaging.incoming." + HOT + ".max-outstanding-messages", String.valueOf(PREFETCH))
            .overrideConfigKey("mp.messaging.incoming." + LOCAL + ".max-outstanding-messages", String.valueOf(PREFETCH))
            .overrideConfigKey("quarkus.idempotency.requeue-delay", "10s")
            // every duplicate must reach the store, which counts its answers
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0");

    static Connection connection;
    static Channel amqp;

    @Inject
    Consumers consumers;

    @Inject
    HoldingStore store;

    @BeforeAll
    static void connect() throws Exception {
        connection = RabbitApps.connect();
        RabbitApps.purge(connection, HOT, HOT + ".dlq", LOCAL, LOCAL + ".dlq");
        amqp = connection.createChannel();
        amqp.queueDelete(WAIT_QUEUE); // messages an earlier run left waiting
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @Test
    void messagesWaitingForAKeyHeldElsewhereDoNotTakeThePrefetchFromTheOthers() throws Exception {
        String remote = "remote-" + UUID.randomUUID();
        store.heldElsewhere = remote;
        for (int i = 0; i < PREFETCH; i++) {
            RabbitApps.publish(amqp, HOT, remote, "text/plain", "remote");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> store.busyAnswers.get() >= PREFETCH);
        long start = System.nanoTime();
        Set<String> others = new java.util.HashSet<>();
        for (int i = 0; i < 10; i++) {
            others.add("other-" + i + "-" + remote);
            RabbitApps.publish(amqp, HOT, "other-" + i + "-" + remote, "text/plain", "other-" + i + "-" + remote);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> consumers.others.containsAll(others));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMillis < 5_000, "the others waited " + tookMillis + " ms: the waiting duplicates held the"
                + " prefetch until the 10 s requeue delay passed");
        store.heldElsewhere = null;
        await().atMost(Duration.ofSeconds(30)).until(() -> amqp.messageCount(HOT) == 0 && store.doneAnswers.get() > 0);
    }

    @Test
    void messagesPastHalfThePrefetchWaitOutTheirDelayInTheWaitQueueNotComingBackEarly() throws Exception {
        String remote = "parked-" + UUID.randomUUID();
        store.heldElsewhere = remote;
        int before = store.busyAnswers.get();
        int burst = 5 * PREFETCH;
        for (int i = 0; i < burst; i++) {
            RabbitApps.publish(amqp, HOT, remote, "text/plain", remote);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> store.busyAnswers.get() - before >= burst);
        // for the 10 s requeue delay, none of them reaches the store again: they wait, most in the wait queue
        await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6))
                .until(() -> store.busyAnswers.get() - before == burst);
        assertTrue(amqp.messageCount(WAIT_QUEUE) >= burst - PREFETCH, "past half the prefetch, they wait in "
                + WAIT_QUEUE + ": " + amqp.messageCount(WAIT_QUEUE));
        store.heldElsewhere = null;
        // then they come back to the queue, and the first is handled, the others duplicates
        try {
            await().atMost(Duration.ofSeconds(40)).until(() -> amqp.messageCount(WAIT_QUEUE) == 0
                    && amqp.messageCount(HOT) == 0 && consumers.runs(remote) == 1);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("waiting " + amqp.messageCount(WAIT_QUEUE) + ", ready " + amqp.messageCount(HOT)
                    + ", runs " + consumers.runs(remote) + ", busy answers " + (store.busyAnswers.get() - before)
                    + ", done answers " + store.doneAnswers.get(), e);
        }
    }

    @Test
    void duplicatesOfAKeyHeldInThisProcessComeBackAsSoonAsItsDeliveryEnded() throws Exception {
        String local = "local-" + UUID.randomUUID();
        RabbitApps.publish(amqp, LOCAL, local, "text/plain", "local");
        await().atMost(Duration.ofSeconds(10)).until(() -> consumers.localRuns.get() == 1);
        long start = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            RabbitApps.publish(amqp, LOCAL, local, "text/plain", "local");
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> store.doneAnswers.get() >= 3);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        System.out.println(
                "DUPLICATES took " + tookMillis + " done=" + store.doneAnswers.get() + " busy=" + store.busyAnswers.get());
        assertTrue(tookMillis < 5_000, "the duplicates were acked " + tookMillis + " ms later: they waited the 10 s"
                + " requeue delay instead of the first delivery's second");
        assertEquals(1, consumers.localRuns.get(), "the hot key ran once");
    }

    @Singleton
    public static class Consumers {
        final AtomicInteger localRuns = new AtomicInteger();
        /** Runs per payload: a parked message carries its own key, so a message an earlier run left counts apart. */
        final Map<String, AtomicInteger> parkedRuns = new ConcurrentHashMap<>();
        final Set<String> others = ConcurrentHashMap.newKeySet();

        int runs(String payload) {
            AtomicInteger runs = parkedRuns.get(payload);
            return runs == null ? 0 : runs.get();
        }

        @Incoming(HOT)
        @Idempotent
        @Blocking(ordered = false)
        void hot(String payload) {
            if (payload.startsWith("other")) {
                others.add(payload);
            } else if (payload.startsWith("parked-")) {
                parkedRuns.computeIfAbsent(payload, p -> new AtomicInteger()).incrementAndGet();
            }
        }

        @Incoming(LOCAL)
        @Idempotent
        @Blocking(ordered = false)
        void local(String payload) throws InterruptedException {
            localRuns.incrementAndGet();
            Thread.sleep(1_000);
        }
    }

    /** Says a key is held by another process while the test wants; counts the answers. */
    @Singleton
    public static class HoldingStore extends DelegatingStore {
        final AtomicInteger busyAnswers = new AtomicInteger();
        final AtomicInteger doneAnswers = new AtomicInteger();
        volatile String heldElsewhere;

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            if (key.key().equals(heldElsewhere)) {
                busyAnswers.incrementAndGet();
                return Claim.BUSY;
            }
            Claim claim = super.claim(key, token, lease, retention);
            if (claim.result() == io.quarkiverse.idempotency.ClaimResult.DONE) {
                doneAnswers.incrementAndGet();
            }
            return claim;
        }
    }
}
