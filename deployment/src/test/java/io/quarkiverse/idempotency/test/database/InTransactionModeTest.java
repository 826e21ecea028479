package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * The default mode of a {@code @Transactional} handler: the key is written inside the handler's own transaction, so
 * one commit per message, nothing committed before the handler runs, nothing to take over after a crash, and a
 * concurrent duplicate told "busy" at once, never parked on the first transaction's row.
 */
class InTransactionModeTest {

    static final int POOL = 4;

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "charges" }, Charger.class, Charge.class)
            // every duplicate must reach the database here
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0")
            .overrideConfigKey("quarkus.datasource.jdbc.max-size", String.valueOf(POOL))
            // a connection not had within 5 s fails the delivery: a parked duplicate would show
            .overrideConfigKey("quarkus.datasource.jdbc.acquisition-timeout", "5s");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Charger charger;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    DatabaseIdempotencyStore store;

    private Sql sql() {
        return new Sql(dataSource);
    }

    @BeforeEach
    void clean() throws SQLException {
        sql().execute("DELETE FROM idempotency_record");
        sql().execute("DELETE FROM test_charge");
        charger.runs.set(0);
        charger.failNext = false;
        charger.rollbackNext = false;
        charger.hold = null;
        charger.started = new CountDownLatch(1);
    }

    @Test
    void oneChargePerKeyAndNothingIsCommittedBeforeTheHandlerRuns() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        charger.hold = release;
        Delivered<String> first = Delivered.withId("m-1", "A-1");
        connector.source("charges").send(first.message());
        assertTrue(charger.started.await(10, TimeUnit.SECONDS));
        assertNull(sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'charges:m-1'"),
                "while the handler runs, nothing about the key is committed: no claim of its own");
        release.countDown();
        await().atMost(Duration.ofSeconds(10)).until(first::settled);
        assertEquals(1, first.acks());
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'charges:m-1'"),
                "the key committed with the work");
        charger.hold = null;
        for (int i = 0; i < 2; i++) {
            assertEquals(1, send(Delivered.withId("m-1", "A-1")).acks());
        }
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals(1, charger.runs.get());
    }

    @Test
    void anExceptionOrARollbackLeavesNoTraceButTheAttemptCount() throws SQLException {
        charger.failNext = true;
        HandlerFailedException failed = assertInstanceOf(HandlerFailedException.class,
                send(Delivered.withId("m-2", "A-2")).nacks().get(0));
        assertEquals("card declined", failed.getCause().getMessage());
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals("FAILED 1", sql().query("SELECT state || ' ' || attempts FROM idempotency_record"
                + " WHERE scoped_key = 'charges:m-2'"), "the attempt is counted on a record of its own");

        charger.rollbackNext = true;
        HandlerFailedException rolledBack = assertInstanceOf(HandlerFailedException.class,
                send(Delivered.withId("m-2", "A-2")).nacks().get(0));
        assertInstanceOf(HandlerRolledBackException.class, rolledBack.getCause());
        assertEquals(2, rolledBack.attempt(), "the second attempt: the count survived the first rollback");
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));

        assertEquals(1, send(Delivered.withId("m-2", "A-2")).acks(), "the retry runs");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals("CONFIRMED 2", sql().query("SELECT state || ' ' || attempts FROM idempotency_record"
                + " WHERE scoped_key = 'charges:m-2'"));
    }

    @Test
    void aConcurrentDuplicateIsToldBusyAtOnceWhileTheFirstIsStillInItsTransaction() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        charger.hold = release;
        Delivered<String> first = Delivered.withId("m-3", "A-3");
        connector.source("charges").send(first.message());
        assertTrue(charger.started.await(10, TimeUnit.SECONDS));

        Delivered<String> second = send(Delivered.withId("m-3", "A-3"));
        assertInstanceOf(DeliveryInProgressException.class, second.nacks().get(0),
                "answered while the first holds its transaction open: it did not wait for it");
        assertEquals(1, charger.runs.get(), "the duplicate did not run");
        assertTrue(!first.settled(), "the first is still inside its transaction");

        release.countDown();
        await().atMost(Duration.ofSeconds(10)).until(first::settled);
        assertEquals(1, first.acks());
        assertEquals(1, send(Delivered.withId("m-3", "A-3")).acks(), "the redelivery is a duplicate");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void twoConnectionsClaimTheSameKeyTheSecondIsBusyWithoutWaitingOnALock() throws Exception {
        ScopedKey key = new ScopedKey("charges", "direct");
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Claim> holder = CompletableFuture.supplyAsync(() -> QuarkusTransaction.requiringNew()
                .call(() -> {
                    Claim claim = store.claimInTransaction(key, "holder#1", Duration.ofHours(1));
                    claimed.countDown();
                    release.await(30, TimeUnit.SECONDS);
                    return claim;
                }));
        assertTrue(claimed.await(10, TimeUnit.SECONDS));
        long start = System.nanoTime();
        Claim second = QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(key, "second#1",
                Duration.ofHours(1)));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(ClaimResult.BUSY, second.result());
        // the holder keeps its transaction open 30 s: an answer within half of that did not wait for it (a bound, not a
        // speed target: a loaded machine may take seconds to open a transaction)
        assertTrue(tookMillis < 15_000, "answered in " + tookMillis + " ms, without waiting for the holder");
        assertEquals("0", sql().query("SELECT count(*)::text FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND datname = current_database()"), "nobody waits on a lock");
        release.countDown();
        assertEquals(ClaimResult.NEW, holder.get(10, TimeUnit.SECONDS).result());
        assertEquals(ClaimResult.DONE, QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(key,
                "third#1", Duration.ofHours(1))).result());
    }

    @Test
    void aRetryOfAFailedKeyIsANewClaimAndARunOutLeaseIsLeftToALeaseTakeover() throws SQLException {
        ScopedKey failed = new ScopedKey("charges", "failed-once");
        store.recordFailure(failed, "first#1", "boom", 5, Duration.ofHours(1));
        Claim retry = QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(failed, "w",
                Duration.ofHours(1)));
        assertEquals(ClaimResult.NEW, retry.result(), "a retry, not a takeover");
        assertEquals(1, retry.attempts());

        sql().execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, lease_until,"
                + " expires_at, attempts) VALUES ('charges:ran-out', 'charges', 'CLAIMED', 'dead#1', now(),"
                + " now() - interval '1 second', now() + interval '1 day', 0)");
        // a run-out claim is not taken over inside the transaction: on a lease, outside it, so that the lost attempt is
        // counted whatever the transaction does
        assertEquals(ClaimResult.EXPIRED, QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(
                new ScopedKey("charges", "ran-out"), "w", Duration.ofHours(1))).result());
    }

    @Test
    void moreDuplicatesOfAHotKeyThanTheConnectionPoolHoldsAllComplete() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        charger.hold = release;
        charger.writeAside = true;
        try {
            Delivered<String> first = Delivered.withId("hot", "HOT");
            connector.source("charges").send(first.message());
            assertTrue(charger.started.await(10, TimeUnit.SECONDS));
            List<Delivered<String>> duplicates = new ArrayList<>();
            for (int i = 0; i < POOL + 1; i++) {
                Delivered<String> d = Delivered.withId("hot", "HOT");
                duplicates.add(d);
                connector.source("charges").send(d.message());
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> duplicates.stream().allMatch(Delivered::settled));
            for (Delivered<String> d : duplicates) {
                assertInstanceOf(DeliveryInProgressException.class, d.nacks().get(0), d.toString());
            }
            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(first::settled);
            assertEquals(1, first.acks());
            assertEquals(1, charger.runs.get());
            assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge WHERE order_id = 'HOT-aside'"));
        } finally {
            charger.writeAside = false;
        }
    }

    @Test
    void aClaimOfTheSeparateClaimModeIsBusyWhileLiveAndTakenOverOnceItsLeaseRanOut() throws SQLException {
        // records of the separate-claim mode: one with a lease, two from the version before leases
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
                PreparedStatement ps = c.prepareStatement("INSERT INTO idempotency_record (scoped_key, scope, state,"
                        + " claimed_by, recorded_at, lease_until, expires_at, attempts) VALUES"
                        + " ('charges:m-5', 'charges', 'CLAIMED', 'dead#1', now() - interval '1 minute',"
                        + " now() - interval '1 second', now() + interval '1 day', 0),"
                        + " ('charges:m-6', 'charges', 'CLAIMED', 'live#1', now(), now() + interval '1 minute',"
                        + " now() + interval '1 day', 0),"
                        + " ('charges:m-7', 'charges', 'CLAIMED', 'old-host:1:ab', now() - interval '1 minute', NULL,"
                        + " now() + interval '1 day', 0),"
                        + " ('charges:m-8', 'charges', 'CLAIMED', 'old-host:1:ab', now() - interval '6 minutes', NULL,"
                        + " now() + interval '1 day', 0)")) {
            ps.executeUpdate();
        }
        assertEquals(1, send(Delivered.withId("m-5", "A-5")).acks(), "a claim whose lease ran out is taken over");
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'charges:m-5'"));
        assertInstanceOf(DeliveryInProgressException.class, send(Delivered.withId("m-6", "A-6")).nacks().get(0));
        assertInstanceOf(DeliveryInProgressException.class, send(Delivered.withId("m-7", "A-7")).nacks().get(0),
                "an older version's live claim is honoured");
        assertEquals(1, send(Delivered.withId("m-8", "A-8")).acks(), "an older version's dead claim is taken over");
        assertEquals("2", sql().query("SELECT count(*)::text FROM test_charge"), "only the taken-over ones ran");
        assertEquals("live#1", sql().query("SELECT claimed_by FROM idempotency_record WHERE scoped_key = 'charges:m-6'"));
    }

    private Delivered<String> send(Delivered<String> d) {
        connector.source("charges").send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    @Singleton
    public static class Charger {
        final AtomicInteger runs = new AtomicInteger();
        volatile CountDownLatch started = new CountDownLatch(1);
        volatile boolean failNext;
        volatile boolean rollbackNext;
        volatile boolean writeAside;
        volatile CountDownLatch hold;

        @Inject
        TransactionSynchronizationRegistry transactions;

        @Incoming("charges")
        @Idempotent
        @Blocking(ordered = false)
        @Transactional
        void charge(String orderId) throws InterruptedException {
            runs.incrementAndGet();
            Charge.of(orderId).persistAndFlush();
            CountDownLatch latch = hold;
            if (latch != null) {
                started.countDown();
                latch.await(30, TimeUnit.SECONDS);
            }
            if (writeAside) {
                // a second connection, while this transaction holds the first: had the duplicates parked on the
                // pool, none would be left for it
                QuarkusTransaction.requiringNew().run(() -> Charge.of(orderId + "-aside").persistAndFlush());
            }
            if (failNext) {
                failNext = false;
                throw new IllegalStateException("card declined");
            }
            if (rollbackNext) {
                rollbackNext = false;
                transactions.setRollbackOnly();
            }
        }
    }
}
