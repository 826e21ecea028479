package io.quarkiverse.idempotency.test.rabbitmq;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

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

/**
 * A quorum queue counts every return of a message toward its {@code x-delivery-limit} (RabbitMQ 4 sets 20 by default),
 * past which the broker dead-letters or drops it. A busy key or a store outage is not the message's fault: its
 * requeues must not spend that limit, so a message held longer than the limit allows is still handled once, and never
 * dead-lettered.
 */
class QuorumQueueTest {

    static final String QUORUM = "idempotency-test-quorum";

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.app(new String[] { QUORUM }, Consumers.class, HoldingStore.class,
            DelegatingStore.class)
            .overrideConfigKey("mp.messaging.incoming." + QUORUM + ".queue.x-queue-type", "quorum")
            .overrideConfigKey("mp.messaging.incoming." + QUORUM + ".queue.x-delivery-limit", "2")
            .overrideConfigKey("quarkus.idempotency.requeue-delay", "150ms");

    static Connection connection;
    static Channel amqp;

    @Inject
    Consumers consumers;

    @Inject
    HoldingStore store;

    @BeforeAll
    static void connect() throws Exception {
        connection = RabbitApps.connect();
        RabbitApps.purge(connection, QUORUM, QUORUM + ".dlq");
        amqp = connection.createChannel();
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @Test
    void aKeyHeldElsewhereLongerThanTheDeliveryLimitAllowsIsHandledOnceNeverDeadLettered() throws Exception {
        store.busy = true;
        RabbitApps.publish(amqp, QUORUM, "q-1", "text/plain", "held");
        await().atMost(Duration.ofSeconds(20)).until(() -> store.busyAnswers.get() >= 6);
        assertEquals(0, amqp.messageCount(QUORUM + ".dlq"), "six returns, past the limit of 2: not dead-lettered");
        store.busy = false;
        await().atMost(Duration.ofSeconds(20)).until(() -> consumers.handled("held") == 1);
        await().during(Duration.ofSeconds(1)).until(() -> consumers.handled("held") == 1);
        assertEquals(0, amqp.messageCount(QUORUM + ".dlq"));
    }

    @Test
    void aStoreOutageLongerThanTheDeliveryLimitAllowsNeverDeadLetters() throws Exception {
        store.down = true;
        RabbitApps.publish(amqp, QUORUM, "q-2", "text/plain", "during an outage");
        await().atMost(Duration.ofSeconds(20)).until(() -> store.failedClaims.get() >= 6);
        assertEquals(0, amqp.messageCount(QUORUM + ".dlq"));
        store.down = false;
        await().atMost(Duration.ofSeconds(20)).until(() -> consumers.handled("during an outage") == 1);
        await().during(Duration.ofSeconds(1)).until(() -> consumers.handled("during an outage") == 1);
        assertEquals(0, amqp.messageCount(QUORUM + ".dlq"));
    }

    @Singleton
    public static class Consumers {
        final List<String> payloads = new CopyOnWriteArrayList<>();

        @Incoming(QUORUM)
        @Idempotent
        void handle(String payload) {
            payloads.add(payload);
        }

        long handled(String payload) {
            return payloads.stream().filter(payload::equals).count();
        }
    }

    @Singleton
    public static class HoldingStore extends DelegatingStore {
        final AtomicInteger busyAnswers = new AtomicInteger();
        final AtomicInteger failedClaims = new AtomicInteger();
        volatile boolean busy;
        volatile boolean down;

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            if (down) {
                failedClaims.incrementAndGet();
                throw new IllegalStateException("connection refused");
            }
            if (busy) {
                busyAnswers.incrementAndGet();
                return Claim.BUSY;
            }
            return super.claim(key, token, lease, retention);
        }
    }
}
