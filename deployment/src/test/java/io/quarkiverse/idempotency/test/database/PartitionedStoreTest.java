package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore.HeldClaim;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.DatabaseSchema;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The time-partitioned key table on the real PostgreSQL, created by the extension: one row per key across partitions
 * whatever the writers' expiries, every path of a key, partitions created ahead and dropped whole, the refusals.
 * Partitions of two seconds and a retention of ten, so that keys cross partition boundaries within a test.
 */
class PartitionedStoreTest {

    static final String TABLE = "partitioned_keys";
    static final Duration RETENTION = Duration.ofSeconds(10);
    static final Duration PERIOD = Duration.ofSeconds(2);
    static final Duration LEASE = Duration.ofSeconds(30);

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], ClaimRace.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", TABLE)
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.database.partition-period", "2s")
            .overrideConfigKey("quarkus.idempotency.retention", "10s")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    DatabaseSchema schema;

    @Inject
    AgroalDataSource dataSource;

    private Sql sql() {
        return new Sql(dataSource);
    }

    @BeforeEach
    void clean() throws SQLException {
        sql().execute("TRUNCATE " + TABLE);
    }

    @Test
    void theTableIsPartitionedByExpiryWithPartitionsReachingPastTheRetention() throws SQLException {
        assertEquals("p", sql().query("SELECT relkind::text FROM pg_class WHERE oid = '" + TABLE + "'::regclass"));
        assertTrue(store.partitioned());
        assertEquals("true", sql().query("SELECT (max(upper) - now() > interval '12 seconds')::text FROM ("
                + BOUNDS + ") b"), "partitions reach a retention and a period ahead");
        assertEquals("true", sql().query("SELECT (count(*) >= 6)::text FROM (" + BOUNDS + ") b"));
    }

    /**
     * Six writers claim the same keys at once, each with a retention that puts its row in a partition of its own, half
     * of them on leases and half in their own transactions: PostgreSQL's primary key (the key and its expiry) would let
     * each of them insert. Exactly one wins each key, and each key has one row.
     */
    @Test
    void writersOfOneKeyWhoseExpiriesFallInDifferentPartitionsNeverBothWriteIt() throws Exception {
        int writers = 6;
        List<String> keys = ClaimRace.keys(300);
        Map<String, AtomicInteger> wins = new ConcurrentHashMap<>();
        Map<ClaimResult, AtomicInteger> answers = new ConcurrentHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                Duration retention = RETENTION.plus(PERIOD.multipliedBy(writer));
                List<String> order = new ArrayList<>(keys);
                Collections.shuffle(order);
                done.add(pool.submit(() -> {
                    start.await();
                    for (String k : order) {
                        ScopedKey key = new ScopedKey("boundary", k);
                        String token = "w" + writer + "#" + k;
                        Claim claim = writer % 2 == 0 ? store.claim(key, token, LEASE, retention)
                                : QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(key, token,
                                        retention));
                        answers.computeIfAbsent(claim.result(), x -> new AtomicInteger()).incrementAndGet();
                        if (claim.claimed()) {
                            wins.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
                            if (writer % 2 == 0) {
                                assertTrue(store.confirm(key, token, retention));
                            }
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(300, wins.size(), "every key was won");
        wins.forEach((key, n) -> assertEquals(1, n.get(), "exactly one writer won " + key + ": " + answers));
        assertEquals("300", sql().query("SELECT count(*)::text FROM " + TABLE), "one row per key");
        assertEquals("300", sql().query("SELECT count(DISTINCT scoped_key)::text FROM " + TABLE));
        assertEquals("true", sql().query("SELECT (count(DISTINCT tableoid) >= 3)::text FROM " + TABLE),
                "the winners' rows are spread over partitions");
    }

    @Test
    void aConfirmedKeyIsAnsweredWithTheFactsOfTheMessageThatWroteIt() {
        ScopedKey leased = new ScopedKey("facts", "lease");
        assertEquals(ClaimResult.NEW, store.claim(leased, "a", LEASE, RETENTION, new MessageFacts("m-1", "fp-1")).result());
        assertTrue(store.confirm(leased, "a", RETENTION));
        Claim duplicate = store.claim(leased, "b", LEASE, RETENTION, new MessageFacts("m-2", "fp-2"));
        assertEquals(ClaimResult.DONE, duplicate.result());
        assertEquals(new MessageFacts("m-1", "fp-1"), duplicate.seen());
        assertTrue(duplicate.age() != null && duplicate.age().compareTo(RETENTION) < 0, "age " + duplicate.age());

        ScopedKey inTransaction = new ScopedKey("facts", "tx");
        assertEquals(ClaimResult.NEW, QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(inTransaction,
                "c", RETENTION, false, new MessageFacts("m-3", "fp-3"))).result());
        Claim again = store.claim(inTransaction, "d", LEASE, RETENTION, new MessageFacts("m-4", "fp-4"));
        assertEquals(ClaimResult.DONE, again.result());
        assertEquals(new MessageFacts("m-3", "fp-3"), again.seen());
    }

    @Test
    void everyPathOfAKeyWorksWhenItsRowMovesBetweenPartitions() throws SQLException {
        ScopedKey key = new ScopedKey("paths", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "a", LEASE, RETENTION).result());
        assertEquals(1, store.recordFailure(key, "a", "boom", 3, RETENTION.plus(PERIOD.multipliedBy(3))),
                "a failure counted, the row moved to a later partition");
        Claim retry = store.claim(key, "b", LEASE, RETENTION);
        assertEquals(ClaimResult.NEW, retry.result());
        assertEquals(1, retry.attempts());
        store.renew(List.of(new HeldClaim(key, "b", LEASE)));
        assertTrue(store.confirm(key, "b", RETENTION.plus(PERIOD.multipliedBy(2))));
        assertEquals(ClaimResult.DONE, store.claim(key, "c", LEASE, RETENTION).result());
        assertEquals(ClaimResult.DONE, QuarkusTransaction.requiringNew()
                .call(() -> store.claimInTransaction(key, "d", RETENTION)).result());
        assertEquals("1", count("paths:k"));

        ScopedKey poison = new ScopedKey("paths", "poison");
        assertEquals(1, store.recordFailure(poison, "x", "poison", 1, RETENTION), "counted after a rollback");
        Claim dead = store.claim(poison, "y", LEASE, RETENTION);
        assertEquals(ClaimResult.DEAD_LETTERED, dead.result());
        assertEquals("poison", dead.reason());
        assertTrue(store.releaseDeadLetter(poison));
        Claim replay = store.claim(poison, "z", LEASE, RETENTION.plus(PERIOD));
        assertEquals(ClaimResult.NEW, replay.result());
        assertEquals(0, replay.attempts());
        assertTrue(store.release(poison, "z"), "a fresh claim given up");
        assertNull(sql().query("SELECT state FROM " + TABLE + " WHERE scoped_key = 'paths:poison' AND attempts > 0"));

        ScopedKey failed = new ScopedKey("paths", "failed");
        assertEquals(1, store.recordFailure(failed, "x", "e", 5, RETENTION));
        Claim inTransaction = QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(failed, "t",
                RETENTION.plus(PERIOD)));
        assertEquals(ClaimResult.NEW, inTransaction.result());
        assertEquals(1, inTransaction.attempts(), "a failed key retried inside the transaction keeps its count");
        assertEquals("CONFIRMED", sql().query("SELECT state FROM " + TABLE + " WHERE scoped_key = 'paths:failed'"));

        ScopedKey lapsed = new ScopedKey("paths", "lapsed");
        assertEquals(ClaimResult.NEW, store.claim(lapsed, "old", Duration.ofMillis(1), RETENTION).result());
        // busy until its millisecond lease has run out, then taken over
        AtomicReference<Claim> takeover = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            takeover.set(store.claim(lapsed, "new", LEASE, RETENTION.plus(PERIOD)));
            return takeover.get().result() != ClaimResult.BUSY;
        });
        assertEquals(ClaimResult.TAKEN_OVER, takeover.get().result());
        assertEquals(ClaimResult.BUSY, store.claim(lapsed, "third", LEASE, RETENTION).result());
        assertTrue(store.oldestClaimAge().isPresent());
        for (String k : List.of("paths:k", "paths:poison", "paths:failed", "paths:lapsed")) {
            assertEquals(k.equals("paths:poison") ? "0" : "1", count(k), "one row of " + k);
        }
    }

    @Test
    void thePurgeDropsThePartitionsWhoseKeysAllExpiredAndKeepsTheOthers() throws Exception {
        String partition = confirmShortKeys("purge", 50, key -> QuarkusTransaction.requiringNew().call(
                () -> store.claimInTransaction(new ScopedKey("purge", "long-" + key.key()), "l", RETENTION)));
        awaitPurged(partition, "purge:short-%", () -> store.purgeExpired(10));
        assertEquals("50", sql().query("SELECT count(*)::text FROM " + TABLE + " WHERE scoped_key LIKE 'purge:long-%'"));
        assertEquals("true", sql().query("SELECT (min(lower) <= now() AND max(upper) - now() > interval '10 seconds')"
                + "::text FROM (" + BOUNDS + ") b"), "partitions still cover now and the retention ahead");
        assertEquals("0", sql().query("SELECT count(*)::text FROM pg_class WHERE obj_description(oid, 'pg_class') ="
                + " 'quarkus-idempotency partition of " + TABLE + "' AND NOT relispartition"), "nothing left detached");
    }

    /**
     * The purge called from code inside a transaction (a {@code @Transactional} admin method): it drops the expired
     * partitions all the same, and leaves no session lock on a pooled connection behind (one left there would make
     * every later purge, of any instance, find the drop busy and drop nothing).
     */
    @Test
    void aPurgeCalledInsideATransactionDropsTheExpiredPartitionsAndLeavesNoLockBehind() throws Exception {
        String partition = confirmShortKeys("purge-in-tx", 20, key -> {
        });
        awaitPurged(partition, "purge-in-tx:%", () -> QuarkusTransaction.requiringNew().call(() -> store.purgeExpired(10)));
        assertEquals("0", sql().query("SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND objid ="
                + " (hashtextextended('quarkus-idempotency partition drop " + TABLE + "', 0) & 4294967295)::oid"),
                "no connection keeps the lock that makes purges take turns");
    }

    /**
     * Claims and confirms keys {@code <scope>:short-<i>} kept for a second, each followed by {@code alongside}.
     *
     * @return the partition of the first one
     */
    private String confirmShortKeys(String scope, int count, java.util.function.Consumer<ScopedKey> alongside)
            throws SQLException {
        Duration second = Duration.ofSeconds(1);
        for (int i = 0; i < count; i++) {
            ScopedKey key = new ScopedKey(scope, "short-" + i);
            assertEquals(ClaimResult.NEW, store.claim(key, "s", LEASE, second).result());
            assertTrue(store.confirm(key, "s", second));
            alongside.accept(key);
        }
        return sql().query("SELECT tableoid::regclass::text FROM " + TABLE + " WHERE scoped_key = '" + scope
                + ":short-0'");
    }

    /**
     * Purges until the partition is gone and no key matching the pattern is left: the short keys' partitions (one, or
     * two when their loop crossed a period's end) end at most a second and a period from now, so they are purged as
     * soon as they have.
     */
    private void awaitPurged(String partition, String keys, Runnable purge) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
            purge.run();
            return sql().query("SELECT to_regclass('" + partition + "')::text") == null && "0".equals(sql().query(
                    "SELECT count(*)::text FROM " + TABLE + " WHERE scoped_key LIKE '" + keys + "'"));
        });
    }

    @Test
    void aKeyKeptLongerThanThePartitionsReachGetsItsPartitionAtOnce() throws SQLException {
        ScopedKey key = new ScopedKey("reach", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "a", LEASE, Duration.ofMinutes(2)).result());
        assertEquals("true", sql().query("SELECT (max(upper) - now() > interval '2 minutes')::text FROM (" + BOUNDS
                + ") b"));
        assertEquals("1", count("reach:k"));
    }

    /**
     * The same inside a handler's transaction, the default path: the partition is created in a transaction of its own
     * (the handler's rollback cannot undo it, its commit does not wait for it), and the claim goes on in the handler's.
     */
    @Test
    void aKeyClaimedInAHandlersTransactionPastThePartitionsReachGetsItsPartitionAtOnce() throws SQLException {
        ScopedKey key = new ScopedKey("reach", "in-transaction");
        AtomicReference<ClaimResult> claimed = new AtomicReference<>();
        assertThrows(IllegalArgumentException.class, () -> QuarkusTransaction.requiringNew().run(() -> {
            claimed.set(store.claimInTransaction(key, "a", Duration.ofMinutes(3)).result());
            throw new IllegalArgumentException("the handler fails: its transaction rolls back");
        }));
        assertEquals(ClaimResult.NEW, claimed.get());
        assertEquals("true", sql().query("SELECT (max(upper) - now() > interval '3 minutes')::text FROM (" + BOUNDS
                + ") b"), "the partition created for it outlives the handler's rollback");
        assertEquals("0", count("reach:in-transaction"), "the claim rolled back with the handler");
        assertEquals(ClaimResult.NEW, QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(key, "a",
                Duration.ofMinutes(4)).result()));
        assertEquals("1", count("reach:in-transaction"));
    }

    @Test
    void aHandlerTransactionOtherThanReadCommittedIsRefusedNamingWhy() {
        AtomicReference<String> failure = new AtomicReference<>();
        assertThrows(RuntimeException.class, () -> QuarkusTransaction.requiringNew().run(() -> {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
            try {
                store.claimInTransaction(new ScopedKey("isolation", "k"), "t", RETENTION);
            } catch (IllegalStateException e) {
                failure.set(e.getMessage());
                throw e;
            }
        }));
        assertNotNull(failure.get());
        assertTrue(failure.get().contains("needs READ COMMITTED transactions, not repeatable read"), failure.get());
    }

    @Test
    void theCheckNamesAMissingFunctionAndTheUpdateBringsItBack() throws SQLException {
        sql().execute("DROP FUNCTION " + TABLE + "_claim_in_transaction");
        StoreMisconfiguredException e = assertThrows(StoreMisconfiguredException.class, store::check);
        assertTrue(e.getMessage().contains(TABLE + "_claim_in_transaction"), e.getMessage());
        schema.updateSchema();
        store.check();
        assertEquals(ClaimResult.NEW, QuarkusTransaction.requiringNew()
                .call(() -> store.claimInTransaction(new ScopedKey("check", "k"), "t", RETENTION)).result());
    }

    /** The partitions' bounds: columns lower and upper. */
    static final String BOUNDS = "SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']*)''\\)'))[1]"
            + "::timestamptz AS lower, (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']*)''\\)'))[1]"
            + "::timestamptz AS upper FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            + " WHERE i.inhparent = '" + TABLE + "'::regclass";

    private String count(String scopedKey) throws SQLException {
        return sql().query("SELECT count(*)::text FROM " + TABLE + " WHERE scoped_key = '" + scopedKey + "'");
    }
}
