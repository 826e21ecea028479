package io.quarkiverse.idempotency.test.store;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.PostConstruct;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.StoreUnavailableException;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.database.Charge;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * The store failing at confirm time, both ways the contract gives: inside a transaction the work rolls back and the
 * message is retried (a store failure, not a counted attempt); without one the work happened, so the message is acked
 * and an error names the key.
 */
class ConfirmFailureTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "tx", "plain" }, Consumers.class,
            BreakableStore.class, Charge.class)
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0")
            .setLogRecordPredicate(r -> r.getLoggerName().startsWith("io.quarkiverse.idempotency"))
            .assertLogRecords(records -> assertTrue(records.stream().anyMatch(r -> String.valueOf(r.getMessage())
                    .contains("Could not confirm key '%s' after %s succeeded")
                    && String.valueOf(r.getParameters()[0]).equals("plain:p-1")), "an error names the key"));

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    BreakableStore store;

    @Inject
    Consumers consumers;

    @Inject
    AgroalDataSource dataSource;

    @BeforeEach
    void clean() throws SQLException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
        new Sql(dataSource).execute("DELETE FROM test_charge");
        store.failConfirms = false;
    }

    @Test
    void inATransactionTheWorkRollsBackAndTheMessageIsRetried() throws SQLException {
        store.failConfirms = true;
        Delivered<String> first = send("tx", Delivered.withId("t-1", "T-1"));
        StoreUnavailableException failed = assertInstanceOf(StoreUnavailableException.class, first.nacks().get(0));
        assertTrue(failed.requeue(), "retried, never dead-lettered");
        assertEquals("0", new Sql(dataSource).query("SELECT count(*)::text FROM test_charge"), "the work rolled back");
        assertEquals(null, new Sql(dataSource).query("SELECT state FROM idempotency_record WHERE scoped_key = 'tx:t-1'"),
                "the claim was given up, not counted as a failed attempt");

        store.failConfirms = false;
        assertEquals(1, send("tx", Delivered.withId("t-1", "T-1")).acks(), "the retry runs at once");
        assertEquals("1", new Sql(dataSource).query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void withoutATransactionTheWorkHappenedSoTheMessageIsAcked() throws SQLException {
        store.failConfirms = true;
        Delivered<String> d = send("plain", Delivered.withId("p-1", "P-1"));
        assertEquals(1, d.acks(), "the work happened: acked");
        assertEquals(1, consumers.plain.get());
        assertEquals("CLAIMED", new Sql(dataSource).query("SELECT state FROM idempotency_record"
                + " WHERE scoped_key = 'plain:p-1'"), "the claim runs out with its lease");
    }

    private Delivered<String> send(String channel, Delivered<String> d) {
        connector.source(channel).send(d.message());
        await().atMost(Duration.ofSeconds(10)).until(d::settled);
        return d;
    }

    @Singleton
    public static class Consumers {
        final AtomicInteger plain = new AtomicInteger();

        @Incoming("tx")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Transactional
        void tx(String orderId) {
            Charge.of(orderId).persistAndFlush();
        }

        @Incoming("plain")
        @Idempotent
        void plain(String orderId) {
            plain.incrementAndGet();
        }
    }

    /** The database store, whose confirms fail on demand. */
    @Singleton
    public static class BreakableStore implements IdempotencyStore {
        volatile boolean failConfirms;
        DatabaseIdempotencyStore delegate;

        @Inject
        AgroalDataSource dataSource;

        @Inject
        TransactionManager transactions;

        @PostConstruct
        void create() {
            delegate = new DatabaseIdempotencyStore(dataSource, transactions, "idempotency_record", false);
        }

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            return delegate.claim(key, token, lease, retention);
        }

        @Override
        public boolean confirm(ScopedKey key, String token, Duration retention) {
            if (failConfirms) {
                throw new IllegalStateException("connection reset");
            }
            return delegate.confirm(key, token, retention);
        }

        @Override
        public boolean confirmInTransaction(ScopedKey key, String token, Duration retention) {
            if (failConfirms) {
                throw new IllegalStateException("connection reset");
            }
            return delegate.confirmInTransaction(key, token, retention);
        }

        @Override
        public boolean joinsTransactions() {
            return true;
        }

        @Override
        public Claim claimInTransaction(ScopedKey key, String token, Duration retention) {
            return delegate.claimInTransaction(key, token, retention);
        }

        @Override
        public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
            return delegate.recordFailure(key, token, failure, maxAttempts, retention);
        }

        @Override
        public boolean release(ScopedKey key, String token) {
            return delegate.release(key, token);
        }

        @Override
        public void renew(Collection<HeldClaim> claims) {
            delegate.renew(claims);
        }

        @Override
        public int purgeExpired(int limit) {
            return delegate.purgeExpired(limit);
        }
    }
}
