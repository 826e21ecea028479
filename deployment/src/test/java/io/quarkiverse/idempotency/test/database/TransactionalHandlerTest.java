package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A @Transactional handler writing a business row, on the real PostgreSQL, in both modes: the key is written in the
 * handler's transaction (the default) or confirmed there after a lease-mode claim, and every way that transaction can
 * end leaves the two writes consistent, with the failed attempt counted.
 */
class TransactionalHandlerTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "charges", "leased", "slow" },
            Charger.class, Charge.class);

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
        charger.mode = Mode.OK;
    }

    @Test
    void successCommitsTheBusinessRowAndTheConfirmedKeyTogether() throws SQLException {
        Delivered<String> d = send("charges", Delivered.withId("m-1", "A-1"));
        assertEquals(1, d.acks());
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge WHERE order_id = 'A-1'"));
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'charges:m-1'"));

        Delivered<String> duplicate = send("charges", Delivered.withId("m-1", "A-1"));
        assertEquals(1, duplicate.acks());
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void exceptionRollsBackBothAndCountsTheAttempt() throws SQLException {
        charger.mode = Mode.THROW;
        Delivered<String> d = send("charges", Delivered.withId("m-2", "A-2"));
        assertEquals("card declined", failure(d).getCause().getMessage());
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals("FAILED 1", record("charges:m-2"), "no key, only the attempt");

        charger.mode = Mode.OK;
        assertEquals(1, send("charges", Delivered.withId("m-2", "A-2")).acks(), "the retry runs");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void aCheckedExceptionAlsoRollsBackBothAndCountsTheAttempt() throws SQLException {
        charger.mode = Mode.CHECKED;
        Delivered<String> d = send("charges", Delivered.withId("m-5", "A-5"));
        assertEquals("gateway timeout", failure(d).getCause().getMessage());
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"),
                "@Transactional would commit on a checked exception; the extension rolls it back");
        assertEquals("FAILED 1", record("charges:m-5"));
    }

    @Test
    void setRollbackOnlyWithoutExceptionRollsBackBothAndCountsTheAttempt() throws SQLException {
        charger.mode = Mode.ROLLBACK_ONLY;
        Delivered<String> d = send("charges", Delivered.withId("m-3", "A-3"));
        assertInstanceOf(HandlerRolledBackException.class, failure(d).getCause());
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals("FAILED 1", record("charges:m-3"));
    }

    @Test
    void leaseModeConfirmsInTheHandlersTransactionAndCountsAFailureOnItsClaim() throws SQLException {
        assertEquals(1, send("leased", Delivered.withId("l-1", "L-1")).acks());
        assertEquals("CONFIRMED 0", record("leased:l-1"));
        assertEquals(1, send("leased", Delivered.withId("l-1", "L-1")).acks());
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));

        charger.mode = Mode.THROW;
        assertEquals("card declined", failure(send("leased", Delivered.withId("l-2", "L-2"))).getCause().getMessage());
        assertEquals("FAILED 1", record("leased:l-2"), "the claim is released and the attempt counted");
        assertNull(sql().query("SELECT lease_until FROM idempotency_record WHERE scoped_key = 'leased:l-2'"));
    }

    @Test
    void takeoverDuringALeaseModeHandlerRollsTheBusinessRowBack() throws SQLException {
        charger.mode = Mode.STOLEN;
        Delivered<String> d = send("leased", Delivered.withId("m-4", "A-4"));
        assertInstanceOf(ClaimLostException.class, d.nacks().get(0));
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"), "business row rolled back");
        assertEquals("thief", sql().query("SELECT claimed_by FROM idempotency_record WHERE scoped_key = 'leased:m-4'"),
                "the new owner's claim is untouched");
        assertEquals("CLAIMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'leased:m-4'"));
    }

    @Test
    void aSlowLiveHandlerIsRenewedNotTakenOver() throws Exception {
        Delivered<String> first = Delivered.withId("s-1", "S-1");
        connector.source("slow").send(first.message());
        assertEquals(true, charger.slowStarted.await(10, TimeUnit.SECONDS));
        double firstLease = Double.parseDouble(sql().query("SELECT extract(epoch FROM lease_until)::text"
                + " FROM idempotency_record WHERE scoped_key = 'slow:s-1'"));
        // Wait until the lease was renewed past twice its 3 s: without renewal it would have run out twice over.
        await().atMost(Duration.ofSeconds(30)).until(() -> Double.parseDouble(sql().query(
                "SELECT extract(epoch FROM lease_until)::text FROM idempotency_record WHERE scoped_key = 'slow:s-1'"))
                - firstLease >= 6.0);

        Delivered<String> second = send("slow", Delivered.withId("s-1", "S-1"));
        assertInstanceOf(DeliveryInProgressException.class, second.nacks().get(0));
        assertEquals(1, charger.slowRuns.get(), "not taken over while alive");

        charger.slowRelease.countDown();
        await().until(first::settled);
        assertEquals(1, first.acks());
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'slow:s-1'"));
    }

    private static HandlerFailedException failure(Delivered<String> d) {
        return assertInstanceOf(HandlerFailedException.class, d.nacks().get(0), d.toString());
    }

    private String record(String key) throws SQLException {
        return sql().query("SELECT state || ' ' || attempts FROM idempotency_record WHERE scoped_key = '" + key + "'");
    }

    private Delivered<String> send(String channel, Delivered<String> d) {
        connector.source(channel).send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    enum Mode {
        OK,
        THROW,
        CHECKED,
        ROLLBACK_ONLY,
        STOLEN
    }

    @Singleton
    public static class Charger {
        volatile Mode mode = Mode.OK;
        final CountDownLatch slowStarted = new CountDownLatch(1);
        final CountDownLatch slowRelease = new CountDownLatch(1);
        final AtomicInteger slowRuns = new AtomicInteger();

        @Inject
        EntityManager entityManager;

        @Inject
        TransactionSynchronizationRegistry transactions;

        @Incoming("charges")
        @Idempotent
        @Transactional
        void charge(String orderId) throws java.util.concurrent.TimeoutException {
            work(orderId);
        }

        @Incoming("leased")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Transactional
        void leased(String orderId) throws java.util.concurrent.TimeoutException {
            work(orderId);
        }

        private void work(String orderId) throws java.util.concurrent.TimeoutException {
            Charge.of(orderId).persistAndFlush();
            switch (mode) {
                case THROW -> throw new IllegalStateException("card declined");
                case CHECKED -> throw new java.util.concurrent.TimeoutException("gateway timeout");
                case ROLLBACK_ONLY -> transactions.setRollbackOnly();
                case STOLEN -> QuarkusTransaction.requiringNew().run(() -> entityManager.createNativeQuery(
                        "UPDATE idempotency_record SET claimed_by = 'thief' WHERE scope = 'leased'").executeUpdate());
                case OK -> {
                }
            }
        }

        @Incoming("slow")
        @Idempotent(mode = IdempotencyMode.LEASE, lease = "3s")
        @Blocking(ordered = false)
        @Transactional
        void slow(String orderId) throws InterruptedException {
            slowRuns.incrementAndGet();
            slowStarted.countDown();
            slowRelease.await(30, TimeUnit.SECONDS);
            Charge.of(orderId).persist();
        }
    }
}
