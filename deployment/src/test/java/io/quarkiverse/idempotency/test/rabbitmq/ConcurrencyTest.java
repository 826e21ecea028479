package io.quarkiverse.idempotency.test.rabbitmq;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.common.annotation.RunOnVirtualThread;
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * A channel consumed by several consumers at once ({@code concurrency}, SmallRye's way to consume a queue with more
 * threads, which names each copy of the channel {@code <channel>$<n>}) and by an unordered blocking method: every
 * message is handled once, duplicates are acknowledged, nothing is dead-lettered; and by a method on virtual threads.
 */
class ConcurrencyTest {

    static final String CONCURRENT = "idempotency-test-concurrent";
    static final String UNORDERED = "idempotency-test-unordered";
    static final String VIRTUAL = "idempotency-test-virtual";

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.app(new String[] { CONCURRENT, UNORDERED, VIRTUAL },
            Consumers.class)
            .overrideConfigKey("mp.messaging.incoming." + CONCURRENT + ".concurrency", "2")
            .overrideConfigKey("quarkus.idempotency.requeue-delay", "100ms");

    static Connection connection;
    static Channel amqp;

    @Inject
    Consumers consumers;

    @BeforeAll
    static void connect() throws Exception {
        connection = RabbitApps.connect();
        RabbitApps.purge(connection, CONCURRENT, CONCURRENT + ".dlq", UNORDERED, UNORDERED + ".dlq", VIRTUAL,
                VIRTUAL + ".dlq");
        amqp = connection.createChannel();
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @Test
    void twoConsumersOfOneChannelHandleEachMessageOnce() throws Exception {
        publishWithDuplicates(CONCURRENT);
        await().atMost(Duration.ofSeconds(30)).until(() -> consumers.concurrent.size() == 40
                && amqp.messageCount(CONCURRENT) == 0);
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                .until(() -> consumers.concurrentRuns.get() == 40);
        assertEquals(0, amqp.messageCount(CONCURRENT + ".dlq"), "nothing dead-lettered");
    }

    @Test
    void anUnorderedBlockingMethodHandlesEachMessageOnce() throws Exception {
        publishWithDuplicates(UNORDERED);
        await().atMost(Duration.ofSeconds(30)).until(() -> consumers.unordered.size() == 40
                && amqp.messageCount(UNORDERED) == 0);
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                .until(() -> consumers.unorderedRuns.get() == 40);
        assertEquals(0, amqp.messageCount(UNORDERED + ".dlq"), "nothing dead-lettered");
    }

    @Test
    void aMethodOnVirtualThreadsHandlesEachMessageOnce() throws Exception {
        publishWithDuplicates(VIRTUAL);
        await().atMost(Duration.ofSeconds(30)).until(() -> consumers.virtual.size() == 40
                && amqp.messageCount(VIRTUAL) == 0);
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                .until(() -> consumers.virtualRuns.get() == 40);
        assertEquals(0, amqp.messageCount(VIRTUAL + ".dlq"), "nothing dead-lettered");
    }

    // 40 messages, each sent twice, the second copies interleaved with the first ones
    private static void publishWithDuplicates(String queue) throws Exception {
        for (int i = 0; i < 40; i++) {
            RabbitApps.publish(amqp, queue, "m-" + i, "text/plain", "payment " + i);
            if (i >= 5) {
                RabbitApps.publish(amqp, queue, "m-" + (i - 5), "text/plain", "payment " + (i - 5));
            }
        }
        for (int i = 35; i < 40; i++) {
            RabbitApps.publish(amqp, queue, "m-" + i, "text/plain", "payment " + i);
        }
    }

    @Singleton
    public static class Consumers {
        final Set<String> concurrent = ConcurrentHashMap.newKeySet();
        final AtomicInteger concurrentRuns = new AtomicInteger();
        final Set<String> unordered = ConcurrentHashMap.newKeySet();
        final AtomicInteger unorderedRuns = new AtomicInteger();
        final Set<String> virtual = ConcurrentHashMap.newKeySet();
        final AtomicInteger virtualRuns = new AtomicInteger();

        @Incoming(CONCURRENT)
        @Idempotent
        void concurrent(String payment) throws InterruptedException {
            concurrentRuns.incrementAndGet();
            Thread.sleep(10);
            concurrent.add(payment);
        }

        @Incoming(UNORDERED)
        @Idempotent
        @Blocking(ordered = false)
        void unordered(String payment) throws InterruptedException {
            unorderedRuns.incrementAndGet();
            Thread.sleep(10);
            unordered.add(payment);
        }

        // on a JVM without virtual threads (17), Quarkus runs it on a worker thread
        @Incoming(VIRTUAL)
        @Idempotent
        @RunOnVirtualThread
        void virtual(String payment) throws InterruptedException {
            virtualRuns.incrementAndGet();
            Thread.sleep(10);
            virtual.add(payment);
        }
    }
}
