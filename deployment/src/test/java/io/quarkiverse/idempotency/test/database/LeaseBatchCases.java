package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;

/**
 * Lease-mode claims and confirms of concurrent deliveries sharing one statement and one commit, on the real PostgreSQL.
 * A trigger holds the first statement until the test opens its gate (a key containing {@code slow} waits for the
 * advisory lock the test holds, {@link #FIRST}), so that the requests made meanwhile wait and then go as one batch,
 * whose membership the test therefore knows, however slowly the machine runs; a key containing {@code slow-} waits at
 * a second gate ({@link #SECOND}), which holds that batch in its statement; a key containing {@code poison} makes its
 * statement fail.
 */
abstract class LeaseBatchCases {

    static final Duration LEASE = Duration.ofSeconds(30);
    static final Duration RETENTION = Duration.ofMinutes(10);
    /** The gate of the statements of keys containing {@code slow} (not {@code slow-}): an advisory lock's id. */
    static final long FIRST = 4242;
    /** The gate of the statements of keys containing {@code slow-}. */
    static final long SECOND = 4243;
    static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    private ExecutorService pool;

    abstract String table();

    Sql sql() {
        return new Sql(dataSource);
    }

    @BeforeEach
    void prepare() throws SQLException {
        pool = Executors.newCachedThreadPool();
        sql().execute("TRUNCATE " + table());
        sql().execute("CREATE OR REPLACE FUNCTION lease_batch_fault() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN"
                + " IF NEW.scoped_key LIKE '%slow-%' THEN PERFORM pg_advisory_xact_lock_shared(" + SECOND + ");"
                + " ELSIF NEW.scoped_key LIKE '%slow%' THEN PERFORM pg_advisory_xact_lock_shared(" + FIRST + "); END IF;"
                + " IF NEW.scoped_key LIKE '%poison%' THEN RAISE EXCEPTION 'poisoned statement'; END IF;"
                + " RETURN NEW; END $f$");
        sql().execute("DROP TRIGGER IF EXISTS lease_batch_fault ON " + table());
        sql().execute("CREATE TRIGGER lease_batch_fault BEFORE INSERT OR UPDATE ON " + table()
                + " FOR EACH ROW EXECUTE FUNCTION lease_batch_fault()");
    }

    @AfterEach
    void drop() throws SQLException {
        pool.shutdownNow();
        sql().execute("DROP TRIGGER IF EXISTS lease_batch_fault ON " + table());
    }

    static ScopedKey key(String k) {
        return new ScopedKey("batch", k);
    }

    /**
     * Keys in every state claimed in one statement: each delivery learns its own answer, as claims one by one would
     * give it, and a key asked twice in the batch is claimed once.
     */
    @Test
    void claimsOfOneBatchAnswerEachForItsKey() throws Exception {
        assertEquals(ClaimResult.NEW, store.claim(key("done"), "t0", LEASE, RETENTION,
                new MessageFacts("m-done", "fp-done")).result());
        assertTrue(store.confirm(key("done"), "t0", RETENTION));
        claimed("held", "other");
        claimed("dead", "t1");
        assertEquals(1, store.recordFailure(key("dead"), "t1", "it broke", 1, RETENTION));
        claimed("failed", "t2");
        assertEquals(1, store.recordFailure(key("failed"), "t2", "once", 5, RETENTION));
        assertEquals(ClaimResult.NEW, store.claim(key("lapsed"), "t3", Duration.ofMillis(1), RETENTION).result());
        Thread.sleep(20); // its lease of a millisecond has run out

        long[] before = store.leaseBatchStatistics();
        Future<Claim> slow;
        Map<String, Future<Claim>> asked = new LinkedHashMap<>();
        try (Gate first = new Gate(FIRST)) {
            slow = submit(() -> store.claim(key("slow"), "s", LEASE, RETENTION));
            awaitRunning(slow);
            for (String k : List.of("new", "done", "held", "dead", "failed", "lapsed", "twice", "twice")) {
                asked.put(k + "#" + asked.size(), submit(() -> store.claim(key(k), "b-" + k, LEASE, RETENTION,
                        new MessageFacts("m-" + k, "fp-" + k))));
            }
            await().atMost(WAIT).until(() -> store.leaseBatchesWaiting()[0] == 8);
        }
        assertEquals(ClaimResult.NEW, slow.get().result());
        Map<String, Claim> answers = new LinkedHashMap<>();
        for (Map.Entry<String, Future<Claim>> e : asked.entrySet()) {
            answers.put(e.getKey(), e.getValue().get());
        }
        long[] after = store.leaseBatchStatistics();
        assertEquals(2, after[0] - before[0], "the slow claim alone, then the eight together: " + answers);
        assertEquals(9, after[1] - before[1]);

        assertEquals(ClaimResult.NEW, answers.get("new#0").result());
        Claim done = answers.get("done#1");
        assertEquals(ClaimResult.DONE, done.result());
        assertEquals(new MessageFacts("m-done", "fp-done"), done.seen(), "the facts of the message that wrote the key");
        assertTrue(done.age() != null && done.age().compareTo(Duration.ofSeconds(30)) < 0, "its age: " + done.age());
        Claim held = answers.get("held#2");
        assertEquals(ClaimResult.BUSY, held.result());
        assertTrue(held.busyFor().compareTo(Duration.ofSeconds(20)) > 0, "the holder's lease left");
        Claim dead = answers.get("dead#3");
        assertEquals(ClaimResult.DEAD_LETTERED, dead.result());
        assertEquals("it broke", dead.reason());
        Claim failed = answers.get("failed#4");
        assertEquals(ClaimResult.NEW, failed.result());
        assertEquals(1, failed.attempts(), "a retry keeps its count");
        assertEquals(ClaimResult.TAKEN_OVER, answers.get("lapsed#5").result());
        List<ClaimResult> twice = List.of(answers.get("twice#6").result(), answers.get("twice#7").result());
        assertTrue(twice.contains(ClaimResult.NEW) && twice.contains(ClaimResult.BUSY), "one of two wins: " + twice);

        assertEquals("b-new m-new fp-new", sql().query("SELECT claimed_by || ' ' || message_id || ' ' || fingerprint FROM "
                + table() + " WHERE scoped_key = 'batch:new'"));
        assertEquals("m-lapsed", sql().query("SELECT message_id FROM " + table() + " WHERE scoped_key = 'batch:lapsed'"),
                "a takeover keeps the facts of the message that took it over");
        assertEquals("other", sql().query("SELECT claimed_by FROM " + table() + " WHERE scoped_key = 'batch:held'"));
        assertEquals("b-lapsed", sql().query("SELECT claimed_by FROM " + table()
                + " WHERE scoped_key = 'batch:lapsed'"));
        assertEquals("DEAD_LETTERED", sql().query("SELECT state FROM " + table() + " WHERE scoped_key = 'batch:dead'"));
        assertEquals("1", sql().query("SELECT count(*)::text FROM " + table() + " WHERE scoped_key = 'batch:twice'"));
    }

    /**
     * Confirms of one batch: each claim still its token's is confirmed; one taken over since is not, even when the claim
     * that took it over is confirmed in the same batch.
     */
    @Test
    void confirmsOfOneBatchAreFencedEachByItsToken() throws Exception {
        claimed("c1", "t1");
        claimed("c2", "t2");
        claimed("c3", "t3");
        claimed("slow", "s");
        long[] before = store.leaseBatchStatistics();
        Future<Boolean> slow;
        Future<Boolean> c1;
        Future<Boolean> c2;
        Future<Boolean> c3;
        Future<Boolean> c1Stale;
        try (Gate first = new Gate(FIRST)) {
            slow = submit(() -> store.confirm(key("slow"), "s", RETENTION));
            awaitRunning(slow);
            c1 = submit(() -> store.confirm(key("c1"), "t1", RETENTION));
            c2 = submit(() -> store.confirm(key("c2"), "not-its-token", RETENTION));
            c3 = submit(() -> store.confirm(key("c3"), "t3", RETENTION));
            c1Stale = submit(() -> store.confirm(key("c1"), "taken-over", RETENTION));
            await().atMost(WAIT).until(() -> store.leaseBatchesWaiting()[1] == 4);
        }
        assertTrue(slow.get());
        assertTrue(c1.get());
        assertFalse(c2.get(), "a claim that is not this token's is not confirmed");
        assertTrue(c3.get());
        assertFalse(c1Stale.get(), "the key confirmed in the same batch, by the token that holds it, not by this one");
        long[] after = store.leaseBatchStatistics();
        assertEquals(2, after[2] - before[2]);
        assertEquals(5, after[3] - before[3]);
        assertEquals("CLAIMED", sql().query("SELECT state FROM " + table() + " WHERE scoped_key = 'batch:c2'"));
        assertEquals(ClaimResult.DONE, store.claim(key("c3"), "x", LEASE, RETENTION).result());
    }

    /**
     * A statement that fails fails exactly the deliveries of its batch: each learns the failure (a store failure: the
     * delivery is retried later), none of their keys is written, and the batches before and after are untouched.
     */
    @Test
    void aFailedStatementFailsExactlyItsBatch() throws Exception {
        Future<Claim> slow;
        List<Future<Claim>> batch = new ArrayList<>();
        try (Gate first = new Gate(FIRST)) {
            slow = submit(() -> store.claim(key("slow"), "s", LEASE, RETENTION));
            awaitRunning(slow);
            for (String k : List.of("a", "b", "poison", "c")) {
                batch.add(submit(() -> store.claim(key(k), "t-" + k, LEASE, RETENTION)));
            }
            await().atMost(WAIT).until(() -> store.leaseBatchesWaiting()[0] == 4);
        }
        assertEquals(ClaimResult.NEW, slow.get().result(), "the batch before");
        for (Future<Claim> f : batch) {
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get);
            assertInstanceOf(IllegalStateException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("poisoned statement"), e.getCause().getMessage());
        }
        assertNull(sql().query("SELECT scoped_key FROM " + table() + " WHERE scoped_key IN ('batch:a', 'batch:b',"
                + " 'batch:c')"), "nothing of the failed batch was written");
        assertEquals(ClaimResult.NEW, store.claim(key("a"), "again", LEASE, RETENTION).result(), "the batch after");
    }

    /**
     * The batch's database session dies while its statement runs (the server kills it, as when the application's
     * process is killed and its connections drop): every delivery of the batch learns it, no key of it is left
     * behind, and their redeliveries claim them anew.
     */
    @Test
    void aBatchWhoseSessionDiesLeavesNothingBehind() throws Exception {
        List<Future<Claim>> batch = new ArrayList<>();
        try (Gate second = new Gate(SECOND)) {
            Future<Claim> slow;
            try (Gate first = new Gate(FIRST)) {
                slow = submit(() -> store.claim(key("slow"), "s", LEASE, RETENTION));
                awaitRunning(slow);
                for (String k : List.of("slow-a", "slow-b", "slow-c")) {
                    batch.add(submit(() -> store.claim(key(k), "t-" + k, LEASE, RETENTION)));
                }
                await().atMost(WAIT).until(() -> store.leaseBatchesWaiting()[0] == 3);
            }
            assertEquals(ClaimResult.NEW, slow.get().result());
            // the batch of three is now in its statement, held at the second gate: kill its session
            awaitBatchAtSecondGate();
            sql().execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%unnest%'"
                    + " AND state = 'active' AND pid <> pg_backend_pid()");
        }
        for (Future<Claim> f : batch) {
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get);
            assertInstanceOf(IllegalStateException.class, e.getCause());
        }
        assertNull(sql().query("SELECT scoped_key FROM " + table() + " WHERE scoped_key LIKE 'batch:slow-%'"));
        sql().execute("DROP TRIGGER IF EXISTS lease_batch_fault ON " + table());
        for (String k : List.of("slow-a", "slow-b", "slow-c")) {
            assertEquals(ClaimResult.NEW, store.claim(key(k), "again", LEASE, RETENTION).result());
        }
    }

    /** A lone claim goes alone, as before: a batch of one. */
    @Test
    void aLoneClaimIsABatchOfOne() {
        long[] before = store.leaseBatchStatistics();
        assertEquals(ClaimResult.NEW, store.claim(key("lone"), "t", LEASE, RETENTION).result());
        assertTrue(store.confirm(key("lone"), "t", RETENTION));
        long[] after = store.leaseBatchStatistics();
        assertArrayEquals(new long[] { 1, 1, 1, 1 }, new long[] { after[0] - before[0], after[1] - before[1],
                after[2] - before[2], after[3] - before[3] });
    }

    private String claimed(String k, String token) {
        assertEquals(ClaimResult.NEW, store.claim(key(k), token, LEASE, RETENTION).result());
        return token;
    }

    <T> Future<T> submit(Callable<T> call) {
        return pool.submit(call);
    }

    // the leading request is in its statement (held at the first gate) once the database shows it waiting there
    void awaitRunning(Future<?> leader) {
        await().atMost(WAIT).until(() -> leader.isDone() || "1".equals(sql().query("SELECT count(*)::text FROM"
                + " pg_stat_activity WHERE wait_event = 'advisory' AND pid <> pg_backend_pid()")));
        assertFalse(leader.isDone(), "the first statement is still running");
    }

    // a batch's statement is held at the second gate once the database shows it waiting there
    void awaitBatchAtSecondGate() {
        await().atMost(WAIT).until(() -> "1".equals(sql().query("SELECT count(*)::text FROM pg_stat_activity"
                + " WHERE query LIKE '%unnest%' AND wait_event = 'advisory' AND pid <> pg_backend_pid()")));
    }

    /**
     * Holds the statements of the keys at its gate (the trigger waits for this advisory lock) until closed. Its own
     * connection holds the lock and releases it before going back to the pool.
     */
    final class Gate implements AutoCloseable {

        private final Connection connection;
        private final long id;

        Gate(long id) throws SQLException {
            this.id = id;
            this.connection = dataSource.getConnection();
            try (Statement s = connection.createStatement()) {
                s.execute("SELECT pg_advisory_lock(" + id + ")");
            }
        }

        @Override
        public void close() throws SQLException {
            try (Statement s = connection.createStatement()) {
                s.execute("SELECT pg_advisory_unlock(" + id + ")");
            } finally {
                connection.close();
            }
        }
    }
}
