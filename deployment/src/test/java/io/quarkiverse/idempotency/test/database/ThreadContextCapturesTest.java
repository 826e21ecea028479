package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.context.spi.ThreadContextProvider;
import org.eclipse.microprofile.context.spi.ThreadContextSnapshot;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.context.SmallRyeThreadContext;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * What the hot path pays for context propagation: a delivery of a blocking handler over the database store (JDBC) takes
 * no thread-context capture of the extension's own. Every Mutiny operator captures the thread's contexts where SmallRye
 * Context Propagation is present (every Quarkus application with Mutiny), and the delivery's transitions and the
 * store's statements, written once over {@code Uni}, settle on the worker thread before they return: a capture there
 * buys nothing and costs each message a snapshot and two switches per operator (before this was fixed: 11 captures a
 * message in the in-transaction default, 15 with asynchronous-commit, 16 in lease mode; now none). Counted with a
 * {@link ThreadContextProvider} of the test's own,
 * asked for a snapshot at each capture: the same messages through a handler without {@code @Idempotent} set the
 * baseline (the connector's and SmallRye's own captures).
 */
class ThreadContextCapturesTest {

    private static final int MESSAGES = 40;

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(
            new String[] { "plain-charges", "charges", "async-charges", "lease-charges" })
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(Charger.class, Charge.class, CountingCaptures.class, Delivered.class, TestApps.class,
                            Sql.class)
                    .addAsServiceProvider(ThreadContextProvider.class, CountingCaptures.class))
            .overrideConfigKey("quarkus.idempotency.channels.async-charges.asynchronous-commit", "true")
            .overrideConfigKey("quarkus.idempotency.purge.enabled", "false");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    AgroalDataSource dataSource;

    @BeforeEach
    void clean() throws SQLException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
        new Sql(dataSource).execute("DELETE FROM test_charge");
    }

    @Test
    void theInTransactionDefaultCapturesNoContextOfItsOwn() {
        assertNoCaptureOfItsOwn("charges");
    }

    @Test
    void anAsynchronousCommitAndItsFlushCaptureNoContextOfTheirOwn() {
        assertNoCaptureOfItsOwn("async-charges");
    }

    @Test
    void aLeaseModeClaimAndConfirmCaptureNoContextOfTheirOwn() {
        assertNoCaptureOfItsOwn("lease-charges");
    }

    private void assertNoCaptureOfItsOwn(String channel) {
        captures("plain-charges", "warm-plain-" + channel); // the first messages of a channel set up its pipeline
        captures(channel, "warm-" + channel);
        long plain = captures("plain-charges", "plain-" + channel);
        long idempotent = captures(channel, channel);
        // the same worker threads again, after the extension's deliveries: as many captures as before them
        long plainAfter = captures("plain-charges", "plain-after-" + channel);
        assertTrue(Math.abs(plainAfter - plain) < MESSAGES / 4, "without @Idempotent, " + plain + " captures before "
                + channel + "'s deliveries and " + plainAfter + " after them");
        System.out.printf("THREAD CONTEXT CAPTURES: %d messages, %d without @Idempotent (%d after), %d through %s%n",
                MESSAGES, plain, plainAfter, idempotent, channel);
        assertTrue(plain > 0, "the counting provider is asked at each capture: " + plain);
        assertEquals(0, Charger.LEFT_WITHOUT_CONTEXTS.get(), "a handler ran with the thread context the extension sets"
                + " around its own transitions: it was left on the thread, and would keep the handler's own work from"
                + " propagating its contexts");
        // each message one by one: anything the extension captured shows as a capture (or more) per message
        assertTrue(idempotent - plain < MESSAGES / 4, "@Idempotent on " + channel + " captured " + (idempotent - plain)
                + " thread contexts more than the same " + MESSAGES + " messages without it (" + plain + ")");
    }

    /** @return the captures made while {@link #MESSAGES} messages were delivered on {@code channel}, one at a time */
    private long captures(String channel, String prefix) {
        List<Delivered<String>> sent = new ArrayList<>();
        long before = CountingCaptures.CAPTURES.get();
        for (int i = 0; i < MESSAGES; i++) {
            Delivered<String> delivered = Delivered.withId(prefix + "-" + i, prefix + "-" + i);
            sent.add(delivered);
            connector.source(channel).send(delivered.message());
            // looked at once and then every 5 ms: Awaitility's default (after 100 ms, then every 100 ms) made the 600
            // deliveries of this class take a minute
            await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).atMost(Duration.ofSeconds(30))
                    .until(delivered::settled);
        }
        long captures = CountingCaptures.CAPTURES.get() - before;
        sent.forEach(delivered -> assertEquals(1, delivered.acks(), delivered.toString()));
        return captures;
    }

    /** A context of the test's own, propagated like every other: counts the snapshots taken of it. */
    public static class CountingCaptures implements ThreadContextProvider {

        static final AtomicLong CAPTURES = new AtomicLong();
        static final ThreadLocal<Boolean> CAPTURED_HERE = ThreadLocal.withInitial(() -> false);

        @Override
        public ThreadContextSnapshot currentContext(Map<String, String> props) {
            CAPTURES.incrementAndGet();
            CAPTURED_HERE.set(true);
            return () -> () -> {
            };
        }

        @Override
        public ThreadContextSnapshot clearedContext(Map<String, String> props) {
            return () -> () -> {
            };
        }

        @Override
        public String getThreadContextType() {
            return "IdempotencyTestCaptures";
        }
    }

    @Singleton
    public static class Charger {

        /** Handlers in which a capture of the thread's contexts captured nothing. */
        static final AtomicInteger LEFT_WITHOUT_CONTEXTS = new AtomicInteger();

        private static void work(String orderId) {
            // what a handler's own Mutiny operators or contextual futures capture here: every context, as without
            // the extension (its own thread context, which propagates nothing, must not be left on the thread)
            CountingCaptures.CAPTURED_HERE.set(false);
            SmallRyeThreadContext.getCurrentThreadContextOrDefaultContexts().contextualRunnable(() -> {
            });
            if (!CountingCaptures.CAPTURED_HERE.get()) {
                LEFT_WITHOUT_CONTEXTS.incrementAndGet();
            }
            Charge.of(orderId).persist();
        }

        @Incoming("plain-charges")
        @Blocking(ordered = false)
        @Transactional
        void chargePlainly(String orderId) {
            work(orderId);
        }

        @Incoming("charges")
        @Idempotent
        @Blocking(ordered = false)
        @Transactional
        void charge(String orderId) {
            work(orderId);
        }

        @Incoming("async-charges")
        @Idempotent
        @Blocking(ordered = false)
        @Transactional
        void chargeAsynchronously(String orderId) {
            work(orderId);
        }

        @Incoming("lease-charges")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Blocking(ordered = false)
        @Transactional
        void chargeOnALease(String orderId) {
            work(orderId);
        }
    }
}
