package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
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
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.StoreUnavailableException;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * {@code quarkus.idempotency.channels."<channel>".asynchronous-commit}: the handler's transaction, work and key, commits
 * without waiting for its WAL flush, and its message is acked only once a flush has passed that commit; a flush that
 * cannot be had leaves the message unacked and uncounted, and its redelivery finds the key. Another channel keeps
 * synchronous commits.
 */
class AsynchronousCommitTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "async-charges", "sync-charges" },
            Charger.class, Charge.class)
            .overrideConfigKey("quarkus.idempotency.channels.async-charges.asynchronous-commit", "true")
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0")
            // one pooled connection: the flush after a commit runs on the very connection the handler committed on
            .overrideConfigKey("quarkus.datasource.jdbc.max-size", "1")
            .overrideConfigKey("quarkus.datasource.jdbc.acquisition-timeout", "20s")
            // nothing else on that connection: the purge job's first run, at startup, could take it while a test has
            // its search path on the schema that fails flushes (seen once: the purge failed on that schema, and the
            // test waited 20 s for the connection, leaving the search path set for the tests after it)
            .overrideConfigKey("quarkus.idempotency.purge.enabled", "false");

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
        charger.settings.clear();
        charger.failNext = false;
        charger.failTheNextFlush = false;
        charger.loseTheNextCommit = false;
    }

    @Test
    void eachMessageIsAckedOnceAFlushPassedItsAsynchronousCommit() throws Exception {
        long[] before = store.flushStatistics();
        List<Delivered<String>> sent = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Delivered<String> delivered = Delivered.withId("m-" + i, "A-" + i);
            sent.add(delivered);
            connector.source("async-charges").send(delivered.message());
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> sent.stream().allMatch(Delivered::settled));
        sent.forEach(delivered -> assertEquals(1, delivered.acks(), delivered.toString()));
        assertEquals("40", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals("40", sql().query("SELECT count(*)::text FROM idempotency_record WHERE state = 'CONFIRMED'"));
        assertEquals(40, charger.settings.size());
        assertTrue(charger.settings.stream().allMatch("off"::equals),
                "every handler's transaction commits asynchronously: " + charger.settings);
        long[] after = store.flushStatistics();
        assertEquals(40, after[1] - before[1], "every delivery waited for a flush before its ack");
        long flushes = after[0] - before[0];
        assertTrue(flushes >= 1 && flushes <= 40, flushes + " flushes");
        System.out.println("ASYNCHRONOUS COMMIT: 40 deliveries, " + flushes + " flushes");

        for (int i = 0; i < 5; i++) {
            assertEquals(1, send("async-charges", Delivered.withId("m-" + i, "A-" + i)).acks(), "a duplicate");
        }
        assertEquals(40, charger.runs.get());
        assertEquals(after[1] + 5, store.flushStatistics()[1], "a duplicate is acked once a flush passed the commit"
                + " that confirmed its key, as the delivery that wrote it was");
        assertEquals("on", sql().query("SHOW synchronous_commit"), "the pooled connection keeps its own setting");
    }

    @Test
    void aChannelWithoutTheSettingCommitsSynchronously() throws Exception {
        long[] before = store.flushStatistics();
        assertEquals(1, send("sync-charges", Delivered.withId("s-1", "S-1")).acks());
        assertEquals(List.of("on"), List.copyOf(charger.settings));
        assertEquals(before[1], store.flushStatistics()[1], "no flush awaited");
    }

    @Test
    void aFailedHandlerRollsBackAndIsCountedWithoutAwaitingAFlush() throws Exception {
        long[] before = store.flushStatistics();
        charger.failNext = true;
        assertInstanceOf(HandlerFailedException.class, send("async-charges", Delivered.withId("f-1", "F-1")).nacks()
                .get(0));
        assertEquals("FAILED 1", sql().query("SELECT state || ' ' || attempts FROM idempotency_record"
                + " WHERE scoped_key = 'async-charges:f-1'"));
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals(before[1], store.flushStatistics()[1], "a rollback has nothing to make durable");
        assertEquals(1, send("async-charges", Delivered.withId("f-1", "F-1")).acks(), "the retry runs");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void aFlushThatFailsLeavesTheMessageUnackedAndUncountedItsRedeliveryFindsTheKey() throws Exception {
        long[] before = store.flushStatistics();
        Delivered<String> first;
        sql().execute("CREATE SCHEMA IF NOT EXISTS flush_fault");
        sql().execute("CREATE OR REPLACE FUNCTION flush_fault.pg_logical_emit_message(boolean, text, text) RETURNS"
                + " pg_lsn LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION 'the flush fails by construction'; END $f$");
        try {
            charger.failTheNextFlush = true;
            first = send("async-charges", Delivered.withId("k-1", "K-1"));
        } finally {
            // the one pooled connection: its session's search path as it was
            sql().execute("RESET search_path");
            sql().execute("DROP SCHEMA flush_fault CASCADE");
        }
        assertEquals(0, first.acks(), "not acked: whether the commit is durable could not be learnt");
        StoreUnavailableException unavailable = assertInstanceOf(StoreUnavailableException.class, first.nacks().get(0));
        assertTrue(unavailable.requeue(), "retried later");
        assertTrue(String.valueOf(unavailable.getCause()).contains("the flush fails by construction"),
                "the flush was made, and failed: " + unavailable);
        assertEquals(before[1] + 1, store.flushStatistics()[1]);
        assertEquals("CONFIRMED 0", sql().query("SELECT state || ' ' || attempts FROM idempotency_record"
                + " WHERE scoped_key = 'async-charges:k-1'"), "the commit was kept (the server did not crash); no"
                        + " attempt counted");

        assertEquals(1, send("async-charges", Delivered.withId("k-1", "K-1")).acks(), "the redelivery: a duplicate");
        assertEquals(1, charger.runs.get(), "charged once");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    /**
     * A crash of the server can lose an asynchronous commit after it returned, key and work together, and the flush that
     * follows, on the restarted server, succeeds: the flush alone would have the message acked, and the payment lost
     * for good. The message is acked only when the flush finds the key confirmed. The lost commit stands here as a
     * transaction that committed without its key and its charge (the handler deletes both).
     */
    @Test
    void aCommitLostBeforeItWasDurableLeavesTheMessageUnackedAndItsRedeliveryIsHandled() throws Exception {
        long[] before = store.flushStatistics();
        charger.loseTheNextCommit = true;
        Delivered<String> first = send("async-charges", Delivered.withId("l-1", "L-1"));
        assertEquals(0, first.acks(), "not acked: the commit that justified the ack is gone");
        StoreUnavailableException unavailable = assertInstanceOf(StoreUnavailableException.class, first.nacks().get(0));
        assertTrue(unavailable.requeue(), "delivered again later: " + unavailable);
        assertTrue(String.valueOf(unavailable.getCause()).contains("commit was lost"), unavailable.toString());
        assertEquals(before[1] + 1, store.flushStatistics()[1], "it waited for a flush");
        assertEquals("0", sql().query("SELECT count(*)::text FROM idempotency_record"), "no key, no attempt counted");

        assertEquals(1, send("async-charges", Delivered.withId("l-1", "L-1")).acks(), "the redelivery is handled");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"), "charged once");
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key ="
                + " 'async-charges:l-1'"));
    }

    /**
     * A key confirmed by an asynchronous commit that is visible but not flushed yet (the WAL writer asleep): its
     * message redelivered meanwhile is acked as a duplicate only once a flush has passed that commit, so that a crash
     * of the server before the flush cannot lose the work, the key and the message at once.
     */
    @Test
    void aDuplicateOfACommitNotYetDurableIsAckedOnceAFlushPassedIt() throws Exception {
        duplicateOfACommitNotYetDurable("async-charges", "d-1");
    }

    /**
     * The same on a channel without the setting: the commit that confirmed the key may be another channel's
     * asynchronous one, or this channel's in an instance still running with {@code asynchronous-commit} during a
     * rollout. A duplicate is acked on it only once it is durable, whichever channel reads it.
     */
    @Test
    void aDuplicateOnAChannelWithoutTheSettingOfACommitNotYetDurableIsAckedOnceAFlushPassedIt() throws Exception {
        duplicateOfACommitNotYetDurable("sync-charges", "d-2");
    }

    private void duplicateOfACommitNotYetDurable(String channel, String key) throws Exception {
        sql().execute("ALTER SYSTEM SET wal_writer_delay = '10s'");
        sql().query("SELECT pg_reload_conf()::text");
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword())) {
            c.setAutoCommit(false);
            c.createStatement().execute("SET LOCAL synchronous_commit = off");
            c.createStatement().execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by,"
                    + " recorded_at, expires_at, attempts) VALUES ('" + channel + ":" + key + "', '" + channel
                    + "', 'CONFIRMED', 'elsewhere', now(), now() + interval '1 hour', 0)");
            c.commit();
            String committed = text(c, "SELECT pg_current_wal_insert_lsn()::text");
            c.commit();
            long[] before = store.flushStatistics();
            Delivered<String> duplicate = send(channel, Delivered.withId(key, key.toUpperCase()));
            assertEquals(1, duplicate.acks(), "a duplicate");
            assertEquals(0, charger.runs.get(), "not run");
            assertEquals(before[1] + 1, store.flushStatistics()[1], "it waited for a flush before its ack");
            assertTrue(Long.parseLong(text(c, "SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '" + committed
                    + "')::bigint::text")) >= 0, "flushed past the commit that confirmed the key");
            c.commit();
        } finally {
            sql().execute("ALTER SYSTEM RESET wal_writer_delay");
            sql().query("SELECT pg_reload_conf()::text");
        }
    }

    @Test
    void theFlushMakesEveryEarlierAsynchronousCommitDurable() throws Exception {
        // the WAL writer asleep: only the flush can write an asynchronous commit out and sync it
        sql().execute("ALTER SYSTEM SET wal_writer_delay = '10s'");
        sql().query("SELECT pg_reload_conf()::text");
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword())) {
            c.setAutoCommit(false);
            c.createStatement().execute("SET LOCAL synchronous_commit = off");
            c.createStatement().execute("INSERT INTO test_charge (order_id) VALUES ('probe')");
            c.commit();
            String committed = text(c, "SELECT pg_current_wal_insert_lsn()::text");
            c.commit();
            assertTrue(Long.parseLong(text(c, "SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '" + committed
                    + "')::bigint::text")) < 0, "the asynchronous commit is not flushed yet");
            c.commit();
            store.awaitDurable();
            assertTrue(Long.parseLong(text(c, "SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '" + committed
                    + "')::bigint::text")) >= 0, "flushed past the commit");
            c.commit();
        } finally {
            sql().execute("ALTER SYSTEM RESET wal_writer_delay");
            sql().query("SELECT pg_reload_conf()::text");
        }
    }

    private static String text(Connection c, String query) throws SQLException {
        try (var rs = c.createStatement().executeQuery(query)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private Delivered<String> send(String channel, Delivered<String> delivered) {
        connector.source(channel).send(delivered.message());
        await().atMost(Duration.ofSeconds(30)).until(delivered::settled);
        return delivered;
    }

    @Singleton
    public static class Charger {
        final AtomicInteger runs = new AtomicInteger();
        final Queue<String> settings = new ConcurrentLinkedQueue<>();
        volatile boolean failNext;
        volatile boolean failTheNextFlush;
        volatile boolean loseTheNextCommit;

        @Inject
        TransactionSynchronizationRegistry transactions;

        @Incoming("async-charges")
        @Idempotent
        @Blocking(ordered = false)
        @Transactional
        void charge(String orderId) {
            work(orderId);
        }

        @Incoming("sync-charges")
        @Idempotent
        @Blocking(ordered = false)
        @Transactional
        void chargeSynchronously(String orderId) {
            work(orderId);
        }

        private void work(String orderId) {
            runs.incrementAndGet();
            Charge.of(orderId).persistAndFlush();
            settings.add((String) Charge.getEntityManager()
                    .createNativeQuery("SELECT current_setting('synchronous_commit')").getSingleResult());
            if (failTheNextFlush) {
                failTheNextFlush = false;
                // the session's search path finds the test's pg_logical_emit_message first, which fails: the flush that
                // follows the commit, on the same pooled connection, fails by construction
                Charge.getEntityManager().createNativeQuery("SET search_path TO flush_fault, pg_catalog, public")
                        .executeUpdate();
            }
            if (loseTheNextCommit) {
                loseTheNextCommit = false;
                // what a crash of the server does to a commit not yet durable: neither the key nor the work is there
                Charge.getEntityManager().createNativeQuery("DELETE FROM test_charge WHERE order_id = :order")
                        .setParameter("order", orderId).executeUpdate();
                Charge.getEntityManager().createNativeQuery("DELETE FROM idempotency_record WHERE scoped_key ="
                        + " 'async-charges:' || lower(:order)").setParameter("order", orderId).executeUpdate();
            }
            if (failNext) {
                failNext = false;
                throw new IllegalStateException("card declined");
            }
        }
    }
}
