package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.IdempotencyStore.HeldClaim;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.PurgeJob;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The database store's lease-mode statements against the real PostgreSQL: the claim race, leases and takeover,
 * per-claim fencing, attempts and dead-lettered keys, records of older versions, long keys, renewal, purge. Tokens
 * stand for claims: "a1" and "a2" are two deliveries of one process, "b" one elsewhere.
 */
class DatabaseStoreTest {

    static final Duration RETENTION = Duration.ofHours(24);
    static final Duration LEASE = Duration.ofSeconds(30);

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], ClaimRace.class)
            .overrideConfigKey("quarkus.idempotency.purge.batch-size", "10")
            // one table, whose expired rows the purge deletes (PartitionedStoreTest: partitions, the default)
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    IdempotencyPurge purge;

    @Inject
    Scheduler scheduler;

    @Inject
    jakarta.transaction.TransactionManager transactions;

    private Sql sql() {
        return new Sql(dataSource);
    }

    @BeforeEach
    void clean() throws SQLException {
        sql().execute("DELETE FROM idempotency_record");
    }

    /**
     * The look-up of a key's other form while the key storage changes, as an instance of the other form writes that key
     * in its handler's transaction (inserted under the key's lock, not committed yet): busy, as a claim would answer,
     * not "unknown", which would let both deliveries run.
     */
    @Test
    void aLookUpOfAKeyWrittenInATransactionNotCommittedYetIsBusy() throws SQLException {
        ScopedKey key = new ScopedKey("payments", "charge:W-1");
        try (java.sql.Connection writer = dataSource.getConnection()) {
            writer.setAutoCommit(false);
            try (java.sql.Statement s = writer.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(hashtextextended('payments:charge:W-1', 0))");
                s.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at,"
                        + " expires_at, attempts) VALUES ('payments:charge:W-1', 'payments', 'CONFIRMED', 'other',"
                        + " now(), now() + interval '1 hour', 0)");
            }
            assertEquals(ClaimResult.BUSY, store.peek(key).result(), "held by a transaction still open");
            writer.commit();
        }
        assertEquals(ClaimResult.DONE, store.peek(key).result(), "committed: a duplicate");
        assertEquals(ClaimResult.NEW, store.peek(new ScopedKey("payments", "charge:W-2")).result(), "unknown");
    }

    /**
     * The look-up of a key's other form while the key storage changes fails: its failure, which the delivery logs,
     * does not name the key, which in its other form may be the readable one that digest keys keep out of the logs.
     */
    @Test
    void aFailedLookUpOfAKeysOtherFormDoesNotNameIt() throws SQLException {
        sql().execute("ALTER TABLE idempotency_record RENAME TO idempotency_record_away");
        try {
            RuntimeException failed = assertThrows(RuntimeException.class,
                    () -> store.peek(new ScopedKey("payments", "charge:card-4111-1111")));
            assertFalse(String.valueOf(failed).contains("4111"), failed.toString());
            for (Throwable t = failed.getCause(); t != null; t = t.getCause()) {
                assertFalse(String.valueOf(t).contains("4111"), t.toString());
            }
        } finally {
            sql().execute("ALTER TABLE idempotency_record_away RENAME TO idempotency_record");
        }
    }

    @Test
    void eightThreadsRaceForTheSameThousandKeysExactlyOneWinsEach() throws Exception {
        ClaimRace.Result race = ClaimRace.run(store, 8, "race", ClaimRace.keys(1_000), (key, token) -> {
            if (key.key().hashCode() % 2 == 0) {
                assertTrue(store.confirm(key, token, RETENTION));
            }
        });
        assertEquals(1_000, race.wins().size(), "every key was won");
        race.wins().forEach((key, count) -> assertEquals(1, count.get(), "exactly one NEW for " + key));
        assertEquals(1_000, race.answered(ClaimResult.NEW));
        assertEquals(0, race.answered(ClaimResult.TAKEN_OVER));
        assertEquals(7_000, race.answered(ClaimResult.DONE) + race.answered(ClaimResult.BUSY),
                "the rest are DONE or BUSY: " + race.answers());
        assertEquals(1_000, QuarkusTransaction.requiringNew().call(() -> IdempotencyRecord.count()));
    }

    @Test
    void twoInstancesPurgingAtOnceDeleteEveryExpiredRowOnceWithoutWaitingForEachOther() throws Exception {
        sql().execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts) SELECT 'p:' || g, 'p', 'CONFIRMED', 'w', now() - interval '2 days',"
                + " now() - interval '1 day', 0 FROM generate_series(1, 20000) g");
        // a second instance: another store on the same table
        DatabaseIdempotencyStore other = new DatabaseIdempotencyStore(dataSource, transactions, "idempotency_record",
                false);
        java.util.concurrent.CompletableFuture<Integer> a = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> purgeAll(store));
        java.util.concurrent.CompletableFuture<Integer> b = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> purgeAll(other));
        int deleted = a.get(60, java.util.concurrent.TimeUnit.SECONDS) + b.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(20_000, deleted, "every expired row deleted, none twice");
        assertEquals("0", sql().query("SELECT count(*)::text FROM idempotency_record"));
    }

    private static int purgeAll(DatabaseIdempotencyStore store) {
        int total = 0;
        for (int batch = 500; batch == 500;) {
            batch = store.purgeExpired(500);
            total += batch;
        }
        return total;
    }

    @Test
    void aClaimWhoseLeaseRanOutIsTakenOverAConfirmedRowNeverIsHoweverOld() throws SQLException {
        insert("s:stale", "CLAIMED", "dead#1", "now() - interval '1 minute'", "now() - interval '1 second'");
        insert("s:done", "CONFIRMED", "dead#2", "now() - interval '10 days'", null);
        insert("s:live", "CLAIMED", "live#1", "now() - interval '1 minute'", "now() + interval '20 seconds'");
        assertEquals(ClaimResult.TAKEN_OVER, claim("stale", "a1").result());
        assertEquals(ClaimResult.DONE, claim("done", "a1").result());
        Claim busy = claim("live", "a1");
        assertEquals(ClaimResult.BUSY, busy.result());
        assertNotNull(busy.busyFor(), "the holder's lease is known");
        assertTrue(busy.busyFor().toSeconds() > 10 && busy.busyFor().toSeconds() <= 20, busy.toString());
        assertEquals("a1", sql().query("SELECT claimed_by FROM idempotency_record WHERE scoped_key = 's:stale'"));
        assertEquals("t", sql().query("SELECT (lease_until > now() + interval '25 seconds')::text::char"
                + " FROM idempotency_record WHERE scoped_key = 's:stale'"), "the taker's own lease");
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 's:done'"));
    }

    @Test
    void recordsOfTheVersionBeforeLeasesAreHonouredForTheirOldTimeout() throws SQLException {
        // Written by the separate-claim mode of earlier versions: no lease, renewed by moving recorded_at.
        insert("s:old-live", "CLAIMED", "old-host:1:ab", "now() - interval '4 minutes'", null);
        insert("s:old-dead", "CLAIMED", "old-host:1:ab", "now() - interval '6 minutes'", null);
        assertEquals(ClaimResult.BUSY, claim("old-live", "a1").result(), "still within five minutes of its renewal");
        assertEquals(ClaimResult.TAKEN_OVER, claim("old-dead", "a1").result());
    }

    @Test
    void aConfirmedKeyIsAnsweredWithTheFactsOfTheMessageThatWroteItAndItsAge() throws Exception {
        ScopedKey leased = new ScopedKey("s", "facts-lease");
        assertEquals(ClaimResult.NEW, store.claim(leased, "a", LEASE, RETENTION, new MessageFacts("m-1", "fp-1")).result());
        assertTrue(store.confirm(leased, "a", RETENTION));
        Claim duplicate = store.claim(leased, "b", LEASE, RETENTION, new MessageFacts("m-2", "fp-2"));
        assertEquals(ClaimResult.DONE, duplicate.result());
        assertEquals(new MessageFacts("m-1", "fp-1"), duplicate.seen());
        assertTrue(duplicate.age().compareTo(Duration.ofSeconds(30)) < 0, "confirmed just now: " + duplicate.age());

        // a retry's claim keeps the facts of the message that retried
        ScopedKey retried = new ScopedKey("s", "facts-retry");
        store.claim(retried, "c1", LEASE, RETENTION, new MessageFacts("m-3", "fp-3"));
        assertEquals(1, store.recordFailure(retried, "c1", "boom", 5, RETENTION));
        store.claim(retried, "c2", LEASE, RETENTION, new MessageFacts("m-4", "fp-4"));
        assertTrue(store.confirm(retried, "c2", RETENTION));
        assertEquals(new MessageFacts("m-4", "fp-4"), claim(retried, "c3").seen());

        // written in the handler's transaction, and answered there
        ScopedKey inTransaction = new ScopedKey("s", "facts-tx");
        assertEquals(ClaimResult.NEW, QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(inTransaction,
                "d1", RETENTION, false, new MessageFacts("m-5", "fp-5"))).result());
        Claim again = QuarkusTransaction.requiringNew().call(() -> store.claimInTransaction(inTransaction, "d2",
                RETENTION, false, new MessageFacts("m-6", "fp-6")));
        assertEquals(ClaimResult.DONE, again.result());
        assertEquals(new MessageFacts("m-5", "fp-5"), again.seen());
        assertTrue(again.age() != null && !again.age().isNegative());

        // a key of an earlier version has no facts: unknown, never a mismatch
        insert("s:facts-old", "CONFIRMED", "w", "now() - interval '1 hour'", null);
        Claim old = claim(new ScopedKey("s", "facts-old"), "e");
        assertEquals(MessageFacts.NONE, old.seen());
        assertTrue(old.age().compareTo(Duration.ofMinutes(59)) > 0, "an hour old: " + old.age());
    }

    @Test
    void fencingIsPerClaimEvenWithinOneProcess() throws SQLException {
        assertEquals(ClaimResult.NEW, claim("f", "a1").result());
        sql().execute("UPDATE idempotency_record SET lease_until = now() - interval '1 second'");
        assertEquals(ClaimResult.TAKEN_OVER, claim("f", "a2").result(), "a later delivery of the same process");
        ScopedKey key = new ScopedKey("s", "f");
        assertFalse(store.confirm(key, "a1", RETENTION), "fenced: the claim is a2's");
        assertFalse(store.release(key, "a1"), "fenced: the claim is a2's");
        assertEquals(0, store.recordFailure(key, "a1", "late failure", 5, RETENTION), "fenced: a2's claim stands");
        assertEquals("CLAIMED", state("f"));
        assertEquals("a2", sql().query("SELECT claimed_by FROM idempotency_record WHERE scoped_key = 's:f'"));
        assertTrue(store.confirm(key, "a2", RETENTION));
        assertFalse(store.release(key, "a2"), "a confirmed key is never released");
    }

    @Test
    void failedAttemptsAreCountedDurablyAndTheLastOneMarksTheKeyDeadLettered() throws SQLException {
        ScopedKey key = new ScopedKey("s", "poison");
        assertEquals(ClaimResult.NEW, store.claim(key, "a1", LEASE, RETENTION).result());
        assertEquals(1, store.recordFailure(key, "a1", "java.lang.IllegalStateException: boom", 3, RETENTION));
        assertEquals("FAILED", state("poison"));
        assertNull(sql().query("SELECT lease_until FROM idempotency_record WHERE scoped_key = 's:poison'"),
                "the claim is released: the retry runs at once");
        Claim retry = store.claim(key, "b", LEASE, RETENTION);
        assertEquals(ClaimResult.NEW, retry.result(), "a retry of a failed key is not a takeover");
        assertEquals(1, retry.attempts(), "it knows how many failed before");
        assertEquals(2, store.recordFailure(key, "b", "boom 2", 3, RETENTION));
        store.claim(key, "a2", LEASE, RETENTION);
        assertEquals(3, store.recordFailure(key, "a2", "java.lang.IllegalStateException: boom 3", 3, RETENTION));
        assertEquals("DEAD_LETTERED", state("poison"));
        assertEquals("java.lang.IllegalStateException: boom 3",
                sql().query("SELECT last_failure FROM idempotency_record WHERE scoped_key = 's:poison'"));
        Claim again = store.claim(key, "c", LEASE, RETENTION);
        assertEquals(ClaimResult.DEAD_LETTERED, again.result(), "a dead-lettered key stays dead-lettered");
        assertEquals(3, again.attempts(), "no new budget");
        assertEquals("java.lang.IllegalStateException: boom 3", again.reason(), "with the original reason");
        assertEquals("DEAD_LETTERED", state("poison"));
        assertTrue(store.releaseDeadLetter(key), "an operator releases it");
        Claim replay = store.claim(key, "d", LEASE, RETENTION);
        assertEquals(ClaimResult.NEW, replay.result(), "then a replay of the dead letter runs");
        assertEquals(0, replay.attempts(), "with a fresh budget");
        assertFalse(store.releaseDeadLetter(key), "only a dead-lettered key is released");
    }

    @Test
    void releasingGivesTheClaimUpWithoutCountingAndKeepsAnEarlierCount() throws SQLException {
        ScopedKey key = new ScopedKey("s", "r");
        store.claim(key, "a1", LEASE, RETENTION);
        assertTrue(store.release(key, "a1"));
        assertNull(state("r"), "a first claim is simply deleted");
        store.claim(key, "a2", LEASE, RETENTION);
        store.recordFailure(key, "a2", "boom", 5, RETENTION);
        store.claim(key, "a3", LEASE, RETENTION);
        assertTrue(store.release(key, "a3"));
        assertEquals("FAILED", state("r"));
        assertEquals(1, store.claim(key, "b", LEASE, RETENTION).attempts(), "the count survived the release");
    }

    @Test
    void scopesNeverCollideAndLongKeysAreStoredAsDigests() throws SQLException {
        assertEquals(ClaimResult.NEW, claim(new ScopedKey("orders", "A-1"), "t1").result());
        assertEquals(ClaimResult.NEW, claim(new ScopedKey("invoices", "A-1"), "t2").result());
        assertEquals(ClaimResult.NEW, claim(new ScopedKey("a:b", "c"), "t3").result());
        assertEquals(ClaimResult.NEW, claim(new ScopedKey("a", "b:c"), "t4").result(), "escaped scope: no collision");

        ScopedKey longKey = new ScopedKey("orders", "x".repeat(1_000));
        assertEquals(ClaimResult.NEW, claim(longKey, "a1").result());
        assertEquals(ClaimResult.BUSY, claim(longKey, "b").result());
        assertTrue(store.confirm(longKey, "a1", RETENTION));
        assertEquals(ClaimResult.DONE, claim(longKey, "b").result());
        assertEquals(ClaimResult.NEW, claim(new ScopedKey("orders", longKey.key() + "y"), "c").result());
        String digest = sql().query("SELECT scoped_key FROM idempotency_record WHERE state = 'CONFIRMED'");
        assertTrue(digest.startsWith("#sha256:") && digest.length() == 72, digest);
    }

    @Test
    void keysWithNulAreStoredAsDigestsNotRejected() {
        ScopedKey withNul = new ScopedKey("nul", "order\u0000A-1");
        assertEquals(ClaimResult.NEW, claim(withNul, "a1").result());
        assertEquals(ClaimResult.BUSY, claim(withNul, "b").result());
        assertTrue(store.confirm(withNul, "a1", RETENTION));
    }

    @Test
    void keysAreBoundParametersNotSql() {
        String hostile = "'); DROP TABLE idempotency_record; --";
        assertEquals(ClaimResult.NEW, claim(new ScopedKey(hostile, hostile), "a1").result());
        assertEquals(ClaimResult.BUSY, claim(new ScopedKey(hostile, hostile), "b").result());
    }

    @Test
    void renewalExtendsTheLeaseOfItsOwnClaimOnly() throws SQLException {
        ScopedKey key = new ScopedKey("s", "k");
        store.claim(key, "a1", LEASE, RETENTION);
        sql().execute("UPDATE idempotency_record SET lease_until = now() + interval '2 seconds'");
        store.renew(List.of(new HeldClaim(key, "b", Duration.ofMinutes(10))));
        assertEquals("t", sql().query("SELECT (lease_until < now() + interval '3 seconds')::text::char"
                + " FROM idempotency_record"), "another claim's token cannot renew this claim");
        store.renew(List.of(new HeldClaim(key, "a1", Duration.ofMinutes(10))));
        assertEquals("t", sql().query("SELECT (lease_until > now() + interval '9 minutes')::text::char"
                + " FROM idempotency_record"), "renewed by its own token");
    }

    @Test
    void purgeDeletesExpiredRowsOfEveryStateInBatchesAndKeepsLiveOnes() throws SQLException {
        // the scheduled job (it fires at startup) must not take these rows: paused, and a run in flight waited for
        scheduler.pause(PurgeJob.IDENTITY);
        purge.purgeExpired();
        String[] states = { "CLAIMED", "CONFIRMED", "FAILED", "DEAD_LETTERED" };
        for (int i = 0; i < 25; i++) {
            insertExpiring("p:old" + i, states[i % 4], "now() - interval '1 day'");
        }
        for (int i = 0; i < 5; i++) {
            insertExpiring("p:live" + i, "CONFIRMED", "now() + interval '1 day'");
        }
        assertEquals(10, store.purgeExpired(10), "one bounded batch");
        assertEquals(15, purge.purgeExpired(), "the rest, in batches of 10");
        assertEquals("5", sql().query("SELECT count(*)::text FROM idempotency_record"));
        assertEquals("0", sql().query("SELECT count(*)::text FROM idempotency_record WHERE expires_at < now()"));
        assertEquals(15, purge.lastRun().orElseThrow().deleted());
        scheduler.resume(PurgeJob.IDENTITY);
    }

    @Test
    void schemaGenerationCreatesThePartialIndexOfLiveClaims() throws SQLException {
        // this application's schema comes from Hibernate ORM, not from the shipped migration
        assertEquals("idempotency_record_claims", sql().query("SELECT indexname FROM pg_indexes"
                + " WHERE tablename = 'idempotency_record' AND indexdef LIKE '%WHERE%CLAIMED%'"));
    }

    @Test
    void purgeJobIsRegisteredWithTheDatabaseStore() {
        assertNotNull(scheduler.getScheduledJob(PurgeJob.IDENTITY));
    }

    private Claim claim(String key, String token) {
        return claim(new ScopedKey("s", key), token);
    }

    private Claim claim(ScopedKey key, String token) {
        return store.claim(key, token, LEASE, RETENTION);
    }

    private String state(String key) throws SQLException {
        return sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 's:" + key + "'");
    }

    private void insert(String id, String state, String token, String recordedAt, String leaseUntil)
            throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO idempotency_record"
                        + " (scoped_key, scope, state, claimed_by, recorded_at, lease_until, expires_at, attempts)"
                        + " VALUES (?, 's', ?, ?, " + recordedAt + ", " + (leaseUntil == null ? "NULL" : leaseUntil)
                        + ", now() + interval '1 day', 0)")) {
            ps.setString(1, id);
            ps.setString(2, state);
            ps.setString(3, token);
            ps.executeUpdate();
        }
    }

    private void insertExpiring(String id, String state, String expiresAt) throws SQLException {
        sql().execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts) VALUES ('" + id + "', 'p', '" + state + "', 'w', now() - interval '2 days', " + expiresAt
                + ", 0)");
    }
}
