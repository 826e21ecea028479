package io.quarkiverse.idempotency.reactive;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
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

import com.rabbitmq.client.GetResponse;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.KeyCalls;
import io.quarkiverse.idempotency.runtime.NonBlockingStore;
import io.quarkiverse.idempotency.runtime.database.PoolKeys;
import io.quarkiverse.idempotency.testing.LogCapture;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * A Hibernate Reactive consumer ({@code @WithTransaction}, returning {@code Uni}, on the event loop) on the real
 * RabbitMQ and PostgreSQL: its key is written in its own reactive transaction, so a duplicate is acked without running,
 * a concurrent duplicate is told busy without waiting for the holder's transaction, a rollback leaves nothing but the
 * attempt count, a poison message is dead-lettered within its budget, and nothing blocks its event loop.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class ReactivePaymentScenarios {

    /**
     * The module's application, built for a test of these scenarios (a @QuarkusTest would also take in the broken
     * consumers the rule tests of this module build applications of their own from), on a database of its own.
     */
    static QuarkusUnitTest app(String database) {
        return ReactiveApps.withServices(new QuarkusUnitTest()
                .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                        .addClasses(ReactivePaymentScenarios.class, ReactivePaymentConsumer.class,
                                BlockingPaymentConsumer.class, LeasePaymentConsumer.class, ReactiveCharge.class,
                                OrderIdKey.class, Attempts.class, ReactiveApps.class, ReactiveServices.class, Ledger.class,
                                Broker.class)
                        .addAsResource("db/migration/V1__charges.sql")),
                database);
    }

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static Broker broker;
    private static LogCapture logs;

    @Inject
    Attempts attempts;

    @Inject
    MeterRegistry registry;

    @Inject
    NonBlockingStore nonBlocking;

    @BeforeAll
    static void connect() {
        broker = new Broker();
        logs = LogCapture.installWithStackFrames();
    }

    @AfterAll
    static void disconnect() throws Exception {
        logs.close();
        broker.close();
    }

    @BeforeEach
    void emptyQueues() {
        broker.reset();
    }

    @Test
    @Order(1)
    void anOrderDeliveredThreeTimesIsChargedOnce() {
        double duplicates = deliveries("duplicate");
        broker.publish(Broker.REACTIVE, "m-r1", Broker.payment("R-1", ""));
        broker.publish(Broker.REACTIVE, "m-r1", Broker.payment("R-1", "")); // the broker's redelivery
        broker.publish(Broker.REACTIVE, "m-r1-again", Broker.payment("R-1", "")); // a republish under a new id
        await().atMost(WAIT).until(() -> deliveries("duplicate") >= duplicates + 2);
        assertEquals(1, Ledger.charges("R-1"));
        assertEquals("CONFIRMED", Ledger.state("R-1"));
        assertEquals(1, attempts.of("R-1"), "a duplicate never runs the handler");
        await().atMost(WAIT).until(() -> broker.ready(Broker.REACTIVE) == 0);
        assertNull(broker.nextDeadLetter(Broker.REACTIVE));
    }

    /**
     * A key confirmed by another instance, in a commit that may not be durable yet (its channel commits asynchronously,
     * or it still does during a rollout), and unknown to this process: the duplicate on the event loop is acked once a
     * flush through the reactive client has passed that commit and found the key, never requeued for good.
     */
    @Test
    @Order(2)
    void aDuplicateOfAKeyConfirmedElsewhereIsAckedOnTheEventLoop() {
        double duplicates = deliveries("duplicate");
        String order = "R-E-" + UUID.randomUUID().toString().substring(0, 8);
        Ledger.confirmedElsewhereAsynchronously(order);
        broker.publish(Broker.REACTIVE, "m-" + order, Broker.payment(order, ""));
        await().atMost(WAIT).until(() -> deliveries("duplicate") >= duplicates + 1);
        await().atMost(WAIT).until(() -> broker.ready(Broker.REACTIVE) == 0);
        assertEquals(0, Ledger.charges(order), "not run");
        assertEquals(0, attempts.of(order), "not run");
        assertNull(broker.nextDeadLetter(Broker.REACTIVE));
    }

    @Test
    @Order(2)
    void aConcurrentDuplicateIsBusyWithoutWaitingForTheHolder() {
        double busy = deliveries("busy");
        double duplicates = deliveries("duplicate");
        broker.publish(Broker.REACTIVE, "m-r2", Broker.payment("R-2", "\"slowMs\": 4000"));
        await().atMost(WAIT).until(() -> attempts.of("R-2") == 1);
        long published = System.nanoTime();
        broker.publish(Broker.REACTIVE, "m-r2-again", Broker.payment("R-2", ""));
        await().atMost(WAIT).until(() -> deliveries("busy") > busy);
        long answeredMs = (System.nanoTime() - published) / 1_000_000;
        // The holder's transaction is still open (its charge not committed): a claim that waited for its row lock
        // could not have answered yet.
        assertEquals(0, Ledger.charges("R-2"), "answered busy after " + answeredMs + " ms, before the holder committed");
        await().atMost(WAIT).until(() -> Ledger.charges("R-2") == 1 && "CONFIRMED".equals(Ledger.state("R-2")));
        await().atMost(WAIT).until(() -> deliveries("duplicate") > duplicates);
        assertEquals(1, attempts.of("R-2"), "the busy delivery, redelivered, found the key confirmed");
        assertEquals(1, Ledger.charges("R-2"));
    }

    @Test
    @Order(3)
    void aRolledBackAttemptLeavesOnlyItsCount() {
        broker.publish(Broker.REACTIVE, "m-r3", Broker.payment("R-3", "\"failures\": 1"));
        await().atMost(WAIT).until(() -> "CONFIRMED".equals(Ledger.state("R-3")));
        assertEquals(2, attempts.of("R-3"));
        assertEquals(1, Ledger.charges("R-3"), "the failed attempt's charge was rolled back with its transaction");
        assertEquals(1, Ledger.attempts("R-3"), "the failed attempt was counted");
    }

    @Test
    @Order(4)
    void aPoisonMessageIsDeadLetteredWithinItsBudget() {
        broker.publish(Broker.REACTIVE, "m-r4", Broker.payment("R-4", "\"failures\": 99"));
        GetResponse dead = await().atMost(WAIT).until(() -> broker.nextDeadLetter(Broker.REACTIVE), d -> d != null);
        assertEquals("m-r4", dead.getProps().getMessageId());
        assertTrue(new String(dead.getBody(), StandardCharsets.UTF_8).contains("R-4"));
        assertEquals(3, attempts.of("R-4"), "quarkus.idempotency.retry.max-attempts=3");
        assertEquals(0, Ledger.charges("R-4"));
        assertEquals("DEAD_LETTERED", Ledger.state("R-4"));

        // a dead-lettered key stays dead-lettered: republished, it goes to the dead letters at once, without running
        broker.publish(Broker.REACTIVE, "m-r4-again", Broker.payment("R-4", ""));
        GetResponse again = await().atMost(WAIT).until(() -> broker.nextDeadLetter(Broker.REACTIVE), d -> d != null);
        assertEquals("m-r4-again", again.getProps().getMessageId());
        assertEquals(3, attempts.of("R-4"));
    }

    @Test
    @Order(5)
    void aHandlerThatSwallowsItsOwnSqlErrorIsNeverAcknowledgedAsHandled() {
        broker.publish(Broker.REACTIVE, "m-r5", Broker.payment("R-5", "\"swallowSqlError\": true"));
        GetResponse dead = await().atMost(WAIT).until(() -> broker.nextDeadLetter(Broker.REACTIVE), d -> d != null);
        assertEquals("m-r5", dead.getProps().getMessageId());
        assertEquals(3, attempts.of("R-5"));
        assertEquals(0, Ledger.charges("R-5"), "its aborted transaction committed nothing");
        assertEquals("DEAD_LETTERED", Ledger.state("R-5"));
    }

    @Test
    @Order(6)
    void aReactiveABlockingAndALeaseConsumerOfOneKeyChargeItOnce() {
        int orders = 30;
        double duplicates = deliveries("duplicate") + duplicates(Broker.BLOCKING) + duplicates(Broker.LEASE);
        for (int i = 0; i < orders; i++) {
            String order = "M-" + i;
            broker.publish(Broker.REACTIVE, "r-" + order, Broker.payment(order, ""));
            broker.publish(Broker.BLOCKING, "b-" + order, Broker.payment(order, ""));
            broker.publish(Broker.LEASE, "l-" + order, Broker.payment(order, ""));
        }
        await().atMost(WAIT).until(() -> Ledger.distinctChargesOf("M-") == orders
                && broker.ready(Broker.REACTIVE) == 0 && broker.ready(Broker.BLOCKING) == 0
                && broker.ready(Broker.LEASE) == 0 && Ledger.claims() == 0);
        await().atMost(WAIT).until(() -> deliveries("duplicate") + duplicates(Broker.BLOCKING)
                + duplicates(Broker.LEASE) >= duplicates + 2 * orders);
        assertEquals(orders, Ledger.chargesOf("M-"), "an order charged by two consumers would show twice");
        assertNull(broker.nextDeadLetter(Broker.REACTIVE));
        assertNull(broker.nextDeadLetter(Broker.BLOCKING));
        assertNull(broker.nextDeadLetter(Broker.LEASE));
    }

    // A method returning Uni without @Blocking nor @WithTransaction: on the event loop, in lease mode, its store calls
    // through the reactive client.

    @Test
    @Order(7)
    void onTheEventLoopWithoutATransactionAnOrderDeliveredThreeTimesIsChargedOnce() {
        double before = duplicates(Broker.LEASE);
        double handled = outcome(Broker.LEASE, "handled");
        broker.publish(Broker.LEASE, "m-l1", Broker.payment("L-1", ""));
        broker.publish(Broker.LEASE, "m-l1", Broker.payment("L-1", ""));
        broker.publish(Broker.LEASE, "m-l1-again", Broker.payment("L-1", ""));
        await().atMost(WAIT).until(() -> duplicates(Broker.LEASE) >= before + 2);
        assertEquals(1, Ledger.charges("L-1"));
        assertEquals("CONFIRMED", Ledger.state("L-1"));
        assertEquals(1, attempts.of("L-1"));
        assertEquals(handled + 1, outcome(Broker.LEASE, "handled"), "one delivery handled, two duplicates");
    }

    @Test
    @Order(8)
    void onTheEventLoopWithoutATransactionAConcurrentDuplicateIsBusy() {
        double busy = outcome(Broker.LEASE, "busy");
        broker.publish(Broker.LEASE, "m-l2", Broker.payment("L-2", "\"slowMs\": 3000"));
        await().atMost(WAIT).until(() -> attempts.of("L-2") == 1);
        broker.publish(Broker.LEASE, "m-l2-again", Broker.payment("L-2", ""));
        await().atMost(WAIT).until(() -> outcome(Broker.LEASE, "busy") > busy);
        assertEquals(0, Ledger.charges("L-2"), "told busy while the first delivery still ran");
        await().atMost(WAIT).until(() -> "CONFIRMED".equals(Ledger.state("L-2")) && broker.ready(Broker.LEASE) == 0);
        await().atMost(WAIT).until(() -> Ledger.claims() == 0);
        assertEquals(1, attempts.of("L-2"), "the busy delivery, redelivered, found the key confirmed");
        assertEquals(1, Ledger.charges("L-2"));
    }

    @Test
    @Order(9)
    void onTheEventLoopWithoutATransactionAPoisonMessageIsDeadLetteredWithinItsBudget() {
        broker.publish(Broker.LEASE, "m-l4", Broker.payment("L-4", "\"failures\": 99"));
        GetResponse dead = await().atMost(WAIT).until(() -> broker.nextDeadLetter(Broker.LEASE), d -> d != null);
        assertEquals("m-l4", dead.getProps().getMessageId());
        assertEquals(3, attempts.of("L-4"), "quarkus.idempotency.retry.max-attempts=3");
        assertEquals(0, Ledger.charges("L-4"));
        assertEquals("DEAD_LETTERED", Ledger.state("L-4"));
        assertEquals(3, Ledger.attempts("L-4"), "each failed attempt counted");

        broker.publish(Broker.LEASE, "m-l4-again", Broker.payment("L-4", ""));
        GetResponse again = await().atMost(WAIT).until(() -> broker.nextDeadLetter(Broker.LEASE), d -> d != null);
        assertEquals("m-l4-again", again.getProps().getMessageId());
        assertEquals(3, attempts.of("L-4"), "a dead-lettered key stays dead-lettered");
    }

    @Test
    @Order(10)
    void claimsAndConfirmsSentAtOnceShareStatementsWithAnAnswerEach() throws Exception {
        KeyCalls keys = nonBlocking.keys();
        PoolKeys pool = assertInstanceOf(PoolKeys.class, keys, "the database store's calls through the reactive client");
        long[] before = pool.batchStatistics();
        Duration lease = Duration.ofSeconds(30);
        Duration retention = Duration.ofHours(1);
        List<Uni<Claim>> claims = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            // the first claim goes alone, the 39 others wait for it and go together: B-1 asked twice in that batch,
            // claimed once, the other asker told it is busy
            String key = i == 39 ? "B-1" : "B-" + i;
            MessageFacts facts = i % 2 == 0 ? new MessageFacts("m-" + i, "fp-" + i) : MessageFacts.NONE;
            claims.add(keys.claim(new ScopedKey("batch", key), "token-" + i, lease, retention, facts));
        }
        List<Claim> answers;
        // the first claim's statement waits on the table until all 40 are asked, however slowly this thread asks
        // them: without it, a fast answer to the first let the last ones go in a third statement
        try (Connection hold = Ledger.holdKeysAgainstWrites()) {
            CompletableFuture<List<Claim>> all = Uni.join().all(claims).andFailFast().subscribeAsCompletionStage();
            hold.rollback();
            answers = all.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        for (int i = 0; i < 39; i++) {
            assertEquals(ClaimResult.NEW, answers.get(i).result(), "B-" + i);
        }
        assertEquals(ClaimResult.BUSY, answers.get(39).result(), "the second claim of B-1 in the same batch");
        long[] after = pool.batchStatistics();
        long statements = after[0] - before[0];
        long claimed = after[1] - before[1];
        assertEquals(40, claimed);
        assertEquals(2, statements, "the first claim alone, the 39 that waited for it together");

        List<Uni<Boolean>> confirms = new ArrayList<>();
        for (int i = 0; i < 39; i++) {
            confirms.add(keys.confirm(new ScopedKey("batch", "B-" + i), "token-" + i, retention));
        }
        confirms.add(keys.confirm(new ScopedKey("batch", "B-1"), "not-its-token", retention));
        List<Boolean> confirmed = Uni.join().all(confirms).andFailFast().await().atMost(WAIT);
        assertEquals(Collections.nCopies(39, true), confirmed.subList(0, 39));
        assertFalse(confirmed.get(39), "a confirm is fenced by its claim's token");
        long[] last = pool.batchStatistics();
        assertTrue(last[2] - after[2] < last[3] - after[3], "confirms sent at once share statements");

        Claim again = keys.claim(new ScopedKey("batch", "B-2"), "token-x", lease, retention, MessageFacts.NONE)
                .await().atMost(WAIT);
        assertEquals(ClaimResult.DONE, again.result());
        assertEquals(new MessageFacts("m-2", "fp-2"), again.seen(), "the facts written by the batch");
    }

    /**
     * A confirm waits for the batch on its way and its delivery is cancelled meanwhile (a graceful shutdown): the work
     * happened, so the confirm is still sent, and the key's redelivery is a duplicate rather than a second run once
     * the lease runs out. (A claim given up so is not sent: nothing ran.)
     */
    @Test
    @Order(11)
    void aConfirmGivenUpWhileItWaitsForItsBatchIsStillSent() {
        KeyCalls keys = nonBlocking.keys();
        Duration lease = Duration.ofSeconds(30);
        Duration retention = Duration.ofHours(1);
        ScopedKey first = new ScopedKey("batch", "G-0");
        ScopedKey givenUp = new ScopedKey("batch", "G-1");
        keys.claim(first, "token-g0", lease, retention, MessageFacts.NONE).await().atMost(WAIT);
        keys.claim(givenUp, "token-g1", lease, retention, MessageFacts.NONE).await().atMost(WAIT);
        Uni<Boolean> alone = keys.confirm(first, "token-g0", retention).memoize().indefinitely();
        alone.subscribe().with(ignored -> {
        });
        // sent while the first is on its way: it waits for the next batch, and its delivery is cancelled there
        keys.confirm(givenUp, "token-g1", retention).subscribe().with(ignored -> {
        }).cancel();
        assertTrue(alone.await().atMost(WAIT));
        await().atMost(WAIT).until(() -> keys.claim(givenUp, "token-x", lease, retention, MessageFacts.NONE)
                .await().atMost(WAIT).result() == ClaimResult.DONE);
    }

    @Test
    @Order(20)
    void nothingBlockedTheEventLoop() {
        assertNull(attempts.offEventLoop(), "the reactive handler ran on an event loop");
        // A JDBC call in the stack of a blocked event loop is a store call. (Other reports are CPU: on this shared
        // 2-core machine, a class loaded or a query compiled for the first time can hold a loop past 100 ms.)
        List<String> blocked = logs.matching("has been blocked for").stream()
                .filter(report -> report.contains("org.postgresql") || report.contains("io.agroal")
                        || report.contains("idempotency.runtime.database.KeyTable"))
                .toList();
        assertTrue(blocked.isEmpty(), "Vert.x's blocked-thread checker: " + blocked);
        List<String> storeOnEventLoop = logs.matching("was called on event loop thread");
        assertTrue(storeOnEventLoop.isEmpty(), "the JDBC store on an event loop: " + storeOnEventLoop);
        assertNotNull(registry.find("idempotency.deliveries").tag("channel", Broker.REACTIVE).counter());
    }

    private double deliveries(String outcome) {
        var counter = registry.find("idempotency.deliveries").tag("channel", Broker.REACTIVE).tag("outcome", outcome)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private double duplicates(String channel) {
        return outcome(channel, "duplicate");
    }

    private double outcome(String channel, String outcome) {
        var counter = registry.find("idempotency.deliveries").tag("channel", channel).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

}
