package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
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
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.Delivered;
import io.quarkiverse.idempotency.test.Sql;
import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * The opt-in mode @Idempotent(claimInTransaction = true): the key is inserted as confirmed inside the
 * handler's transaction. The contract for work in that database still holds: one effect per key, a rollback leaves
 * nothing, and a concurrent duplicate waits for the first instead of running.
 */
class ClaimInTransactionTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "charges" }, Charger.class, Charge.class)
            // every duplicate must reach the database here
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Charger charger;

    @Inject
    AgroalDataSource dataSource;

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
    }

    @Test
    void oneChargePerKeyAndTheKeyIsConfirmedInTheSameCommit() throws SQLException {
        for (int i = 0; i < 3; i++) {
            assertEquals(1, send(Delivered.withId("m-1", "A-1")).acks());
        }
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'charges:m-1'"));
        assertEquals(1, charger.runs.get());
    }

    @Test
    void exceptionOrRollbackLeavesNeitherRowNorKey() throws SQLException {
        charger.failNext = true;
        assertEquals("card declined", send(Delivered.withId("m-2", "A-2")).nacks().get(0).getMessage());
        charger.rollbackNext = true;
        assertInstanceOf(HandlerRolledBackException.class, send(Delivered.withId("m-2", "A-2")).nacks().get(0));
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));
        assertNull(sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'charges:m-2'"));
        assertEquals(1, send(Delivered.withId("m-2", "A-2")).acks(), "the retry runs");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void aConcurrentDuplicateWaitsForTheFirstThenIsAckedWithoutRunning() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        charger.hold = release;
        Delivered<String> first = Delivered.withId("m-3", "A-3");
        connector.source("charges").send(first.message());
        assertTrue(charger.started.await(10, TimeUnit.SECONDS));
        int runsBefore = charger.runs.get();
        Delivered<String> second = Delivered.withId("m-3", "A-3");
        connector.source("charges").send(second.message());
        // the second delivery's insert waits on the first's uncommitted row
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> !second.settled());
        release.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> first.settled() && second.settled());
        assertEquals(1, first.acks());
        assertEquals(1, second.acks(), "a duplicate once the first committed");
        assertEquals(runsBefore, charger.runs.get(), "the duplicate did not run");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
        assertFalse(second.nacks().size() > 0);
    }

    @Test
    void aStaleClaimOfTheOtherModeIsTakenOverALiveOneIsBusy() throws SQLException {
        sql().execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at) VALUES"
                + " ('charges:m-5', 'charges', 'CLAIMED', 'dead-worker', now() - interval '1 hour', now() + interval '1 day'),"
                + " ('charges:m-6', 'charges', 'CLAIMED', 'live-worker', now(), now() + interval '1 day')");
        assertEquals(1, send(Delivered.withId("m-5", "A-5")).acks(), "the dead worker's claim is taken over");
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'charges:m-5'"));
        assertInstanceOf(DeliveryInProgressException.class, send(Delivered.withId("m-6", "A-6")).nacks().get(0));
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"), "only the taken-over one ran");
        assertEquals("live-worker", sql().query("SELECT claimed_by FROM idempotency_record WHERE scoped_key = 'charges:m-6'"));
    }

    private Delivered<String> send(Delivered<String> d) {
        connector.source("charges").send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    @Singleton
    public static class Charger {
        final AtomicInteger runs = new AtomicInteger();
        final CountDownLatch started = new CountDownLatch(1);
        volatile boolean failNext;
        volatile boolean rollbackNext;
        volatile CountDownLatch hold;

        @Inject
        TransactionSynchronizationRegistry transactions;

        @Incoming("charges")
        @Idempotent(claimInTransaction = true)
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
