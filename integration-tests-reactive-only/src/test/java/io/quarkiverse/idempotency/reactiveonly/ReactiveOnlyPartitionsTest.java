package io.quarkiverse.idempotency.reactiveonly;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.PoolIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkiverse.idempotency.testing.LogCapture;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * The default layout in an application with only the reactive PostgreSQL client: the keys' table is created
 * partitioned by time through the client, its partitions are created ahead and dropped as they end through it too,
 * and both reactive writers (a {@code @WithTransaction} consumer, which writes its keys in its transaction through its
 * session, and a consumer on the event loop, which claims and confirms through the pool) charge each order once on it,
 * dead-letter a poison message within its budget, and never block their event loop.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReactiveOnlyPartitionsTest {

    // Keys kept 10 s (leases of 5 s), in partitions of 2 s: the test sees partitions end and go. The event-loop
    // consumer keeps its keys 20 s: partitions are made that far ahead from the start.
    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveOnlyServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(PaymentConsumers.class,
                    Charge.class, OrderIdKey.class, Attempts.class, Ledger.class, ReactiveOnlyServices.class)))
            .overrideConfigKey("quarkus.idempotency.lease", "5s")
            .overrideConfigKey("quarkus.idempotency.retention", "10s")
            .overrideConfigKey("quarkus.idempotency.database.partition-period", "2s")
            .overrideConfigKey("quarkus.idempotency.channels.\"event-loop-payments\".retention", "20s");

    static {
        // the module's other applications share the database: this one starts without a keys' table
        ReactiveOnlyServices.withoutKeysTable(ReactiveOnlyPartitionsTest.class);
    }

    private static final String TRANSACTIONAL = "reactive-only-transactional";
    private static final String EVENT_LOOP = "reactive-only-event-loop";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static RabbitQueues broker;
    private static LogCapture logs;

    @Inject
    IdempotencyStore store;

    @Inject
    Attempts attempts;

    @Inject
    Vertx vertx;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-reactive-only-partitions-it");
        logs = LogCapture.installWithStackFrames();
    }

    @AfterAll
    static void disconnect() throws Exception {
        logs.close();
        broker.close();
    }

    @BeforeEach
    void emptyQueues() {
        broker.purge(TRANSACTIONAL, EVENT_LOOP);
    }

    @Test
    @Order(1)
    void theNewTableIsPartitionedWithPartitionsAhead() {
        assertInstanceOf(PoolIdempotencyStore.class, store);
        assertEquals("p", Ledger.text("SELECT relkind FROM pg_class WHERE oid = to_regclass('idempotency_record')"),
                "the default layout, created through the reactive client");
        assertTrue(((SqlKeyStore) store).partitioned());
        // the longest retention (a channel's 20 s) and two periods ahead, in periods of 2 s
        assertTrue(partitions() >= 11, "partitions: " + partitions());
        assertTrue(secondsAhead() > 20, "the last partition ends " + secondsAhead() + " s ahead");
        store.check();
        assertTrue(logs.matching("IDEMP3008").isEmpty(), "no 'one table by default': " + logs.matching("IDEMP3008"));
    }

    @Test
    @Order(2)
    void bothConsumersChargeEachOrderOnceDeliveredTwiceToEach() {
        int orders = 10;
        for (int i = 0; i < orders; i++) {
            String order = "P-" + i;
            for (int copy = 0; copy < 2; copy++) {
                broker.publish(TRANSACTIONAL, "t-" + order + "-" + copy, RabbitQueues.payment(order, ""));
                broker.publish(EVENT_LOOP, "e-" + order + "-" + copy, RabbitQueues.payment(order, ""));
            }
        }
        await().atMost(WAIT).until(() -> Ledger.distinctChargesOf("P-") == orders && broker.ready(TRANSACTIONAL) == 0
                && broker.ready(EVENT_LOOP) == 0 && Ledger.claims() == 0);
        assertEquals(orders, Ledger.chargesOf("P-"), "an order charged twice would show twice");
        for (int i = 0; i < orders; i++) {
            assertEquals("CONFIRMED", Ledger.state("P-" + i));
        }
        assertEquals(orders, Ledger.count("SELECT count(*) FROM idempotency_record WHERE scoped_key LIKE"
                + " 'payments:charge:P-%'"), "one row per key, whichever partition holds it");
        assertEquals(0, Ledger.count("SELECT count(*) - count(DISTINCT scoped_key) FROM idempotency_record"));
    }

    /**
     * A write of a retention no partition reaches yet (a key written through the store's API with a longer one), on an
     * event loop, as a Hibernate Reactive session's claim is: the partitions are made through the pool without
     * blocking the loop, and the write goes on on its own Vert.x context, where its session lives.
     */
    @Test
    @Order(3)
    void aWriteBeyondThePartitionsHasThemMadeWithoutBlockingItsEventLoop() throws Exception {
        Context context = VertxContext.getOrCreateDuplicatedContext(vertx);
        CompletableFuture<Object[]> done = new CompletableFuture<>();
        context.runOnContext(ignored -> ((SqlKeyStore) store).readyToWrite(Duration.ofSeconds(60)).subscribe().with(
                partitioned -> done.complete(new Object[] { partitioned, Vertx.currentContext(),
                        Context.isOnEventLoopThread() }),
                done::completeExceptionally));
        Object[] answer = done.get(30, TimeUnit.SECONDS);
        assertEquals(true, answer[0], "partitioned");
        assertSame(context, answer[1], "resumed on the caller's context");
        assertEquals(true, answer[2]);
        assertTrue(secondsAhead() > 60, "the last partition ends " + secondsAhead() + " s ahead");
    }

    @Test
    @Order(4)
    void aPoisonMessageIsDeadLetteredWithinItsBudgetByEitherConsumer() {
        ReactiveOnlyServices.deadLettersAPoisonMessage(broker, attempts, TRANSACTIONAL, "PT-4");
        ReactiveOnlyServices.deadLettersAPoisonMessage(broker, attempts, EVENT_LOOP, "PE-4");
    }

    @Test
    @Order(5)
    void partitionsAreDroppedAsTheyEndAndMadeAheadThroughTheClient() {
        long before = partitions();
        // no purge called: the partition-end timers drop each partition once its keys expired (10 s + a period)
        await().atMost(Duration.ofSeconds(40)).until(() -> Ledger.keys("payments") == 0);
        assertEquals(0, Ledger.count("SELECT count(*) FROM (" + BOUNDS + ") p WHERE upper_bound < now() - interval"
                + " '3 seconds'"), "no partition left long past its end");
        assertTrue(partitions() >= 5, "made ahead as time passed: " + partitions() + " (were " + before + ")");
        // a later order lands in a partition made since
        broker.publish(EVENT_LOOP, "e-late", RabbitQueues.payment("P-late", ""));
        broker.publish(TRANSACTIONAL, "t-late", RabbitQueues.payment("P-late", ""));
        await().atMost(WAIT).until(() -> "CONFIRMED".equals(Ledger.state("P-late")) && broker.ready(EVENT_LOOP) == 0
                && broker.ready(TRANSACTIONAL) == 0 && Ledger.claims() == 0);
        assertEquals(1, Ledger.charges("P-late"));
    }

    @Test
    @Order(6)
    void nothingWaitedOnAnEventLoop() {
        assertNull(attempts.offEventLoop(), "every handler ran on an event loop");
        assertTrue(logs.matching("on an event loop thread: the idempotency store waits").isEmpty());
        List<String> blocked = ReactiveOnlyServices.waitingLoops(logs);
        assertTrue(blocked.isEmpty(), "Vert.x's blocked-thread checker: " + blocked);
        assertTrue(logs.matching("Could not").isEmpty(), "no store call failed: " + logs.matching("Could not"));
    }

    /** The upper bound of each partition of the keys' table. */
    private static final String BOUNDS = "SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']*)''\\)'))[1]"
            + "::timestamptz AS upper_bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            + " WHERE i.inhparent = 'idempotency_record'::regclass";

    /** @return how far ahead of now the last partition ends, in whole seconds */
    private static long secondsAhead() {
        return Ledger.count("SELECT extract(epoch FROM max(upper_bound) - now())::bigint FROM (" + BOUNDS + ") p");
    }

    private static long partitions() {
        return Ledger.count("SELECT count(*) FROM pg_inherits WHERE inhparent = 'idempotency_record'::regclass");
    }
}
