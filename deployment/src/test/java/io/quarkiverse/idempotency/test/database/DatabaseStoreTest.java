package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.transaction.TransactionManager;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.PurgeJob;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkiverse.idempotency.test.Sql;
import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The database store against the real PostgreSQL: the claim race, takeover, fencing, long keys, renewal, purge.
 */
class DatabaseStoreTest {

    static final Duration RETENTION = Duration.ofHours(24);
    static final Duration CLAIM_TIMEOUT = Duration.ofMinutes(5);

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], ClaimRace.class)
            .overrideConfigKey("quarkus.idempotency.purge.batch-size", "10");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    private Sql sql() {
        return new Sql(dataSource);
    }

    @Inject
    IdempotencyPurge purge;

    @Inject
    TransactionManager transactions;

    @Inject
    Scheduler scheduler;

    DatabaseIdempotencyStore otherWorker;

    @BeforeEach
    void clean() throws SQLException {
        sql().execute("DELETE FROM idempotency_record");
        otherWorker = new DatabaseIdempotencyStore(dataSource, transactions, "idempotency_record", "other-worker");
    }

    @Test
    void eightThreadsRaceForTheSameThousandKeysExactlyOneWinsEach() throws Exception {
        List<DatabaseIdempotencyStore> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            workers.add(new DatabaseIdempotencyStore(dataSource, transactions, "idempotency_record", "racer-" + t));
        }
        ClaimRace.Result race = ClaimRace.run(workers, "race", ClaimRace.keys(1_000), (worker, key) -> {
            if (key.hashCode() % 2 == 0) {
                assertTrue(worker.confirm("race", key, RETENTION));
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
    void claimsCommitSynchronouslyByDefault() {
        assertFalse(store.asynchronousClaimCommit());
    }

    @Test
    void staleClaimIsTakenOverConfirmedRowNeverIsHoweverOld() throws SQLException {
        insert("s:stale", "s", "CLAIMED", "dead-worker", "now() - interval '10 minutes'", "now() + interval '1 day'");
        insert("s:done", "s", "CONFIRMED", "dead-worker", "now() - interval '10 days'", "now() + interval '1 day'");
        insert("s:live", "s", "CLAIMED", "live-worker", "now() - interval '1 minute'", "now() + interval '1 day'");
        assertEquals(ClaimResult.TAKEN_OVER, store.claim("s", "stale", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.DONE, store.claim("s", "done", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.BUSY, store.claim("s", "live", RETENTION, CLAIM_TIMEOUT));
        assertEquals(store.worker(), sql().query("SELECT claimed_by FROM idempotency_record WHERE scoped_key = 's:stale'"));
        assertEquals("CONFIRMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 's:done'"));
    }

    @Test
    void afterTakeoverTheOldOwnerCanNeitherConfirmNorForget() throws SQLException {
        assertEquals(ClaimResult.NEW, store.claim("f", "k", RETENTION, CLAIM_TIMEOUT));
        sql().execute("UPDATE idempotency_record SET recorded_at = now() - interval '1 hour'");
        assertEquals(ClaimResult.TAKEN_OVER, otherWorker.claim("f", "k", RETENTION, CLAIM_TIMEOUT));
        assertFalse(store.confirm("f", "k", RETENTION), "fenced");
        assertFalse(store.forget("f", "k"), "fenced");
        assertEquals("CLAIMED", sql().query("SELECT state FROM idempotency_record WHERE scoped_key = 'f:k'"));
        assertEquals("other-worker", sql().query("SELECT claimed_by FROM idempotency_record WHERE scoped_key = 'f:k'"));
        assertTrue(otherWorker.confirm("f", "k", RETENTION));
        assertFalse(otherWorker.forget("f", "k"), "a confirmed key is never forgotten");
    }

    @Test
    void scopesNeverCollideAndLongKeysAreStoredAsDigests() throws SQLException {
        assertEquals(ClaimResult.NEW, store.claim("orders", "A-1", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.NEW, store.claim("invoices", "A-1", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.NEW, store.claim("a:b", "c", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.NEW, store.claim("a", "b:c", RETENTION, CLAIM_TIMEOUT), "escaped scope: no collision");

        String longKey = "x".repeat(1_000);
        assertEquals(ClaimResult.NEW, store.claim("orders", longKey, RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.BUSY, otherWorker.claim("orders", longKey, RETENTION, CLAIM_TIMEOUT));
        assertTrue(store.confirm("orders", longKey, RETENTION));
        assertEquals(ClaimResult.DONE, otherWorker.claim("orders", longKey + "", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.NEW, store.claim("orders", longKey + "y", RETENTION, CLAIM_TIMEOUT));
        String digest = sql().query("SELECT scoped_key FROM idempotency_record WHERE state = 'CONFIRMED'");
        assertTrue(digest.startsWith("#sha256:") && digest.length() == 72, digest);
    }

    @Test
    void keysWithNulAreStoredAsDigestsNotRejected() {
        String withNul = "order\u0000A-1";
        assertEquals(ClaimResult.NEW, store.claim("nul", withNul, RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.BUSY, otherWorker.claim("nul", withNul, RETENTION, CLAIM_TIMEOUT));
        assertTrue(store.confirm("nul", withNul, RETENTION));
    }

    @Test
    void keysAreBoundParametersNotSql() {
        String hostile = "'); DROP TABLE idempotency_record; --";
        assertEquals(ClaimResult.NEW, store.claim(hostile, hostile, RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.BUSY, otherWorker.claim(hostile, hostile, RETENTION, CLAIM_TIMEOUT));
    }

    @Test
    void renewalMovesTheClaimForward() throws SQLException {
        store.claim("r", "k", RETENTION, CLAIM_TIMEOUT);
        sql().execute("UPDATE idempotency_record SET recorded_at = now() - interval '4 minutes'");
        otherWorker.renew(List.of(new ScopedKey("r", "k")));
        assertEquals("t", sql().query("SELECT (recorded_at < now() - interval '3 minutes')::text::char"
                + " FROM idempotency_record"), "another worker cannot renew this worker's claim");
        store.renew(List.of(new ScopedKey("r", "k")));
        assertEquals(ClaimResult.BUSY, otherWorker.claim("r", "k", RETENTION, Duration.ofMinutes(2)),
                "renewed: not stale");
    }

    @Test
    void purgeDeletesExpiredRowsOfBothStatesInBatchesAndKeepsLiveOnes() throws SQLException {
        for (int i = 0; i < 25; i++) {
            insert("p:old" + i, "p", i % 2 == 0 ? "CLAIMED" : "CONFIRMED", "w", "now() - interval '2 days'",
                    "now() - interval '1 day'");
        }
        for (int i = 0; i < 5; i++) {
            insert("p:live" + i, "p", "CONFIRMED", "w", "now()", "now() + interval '1 day'");
        }
        assertEquals(10, store.purgeExpired(10), "one bounded batch");
        assertEquals(15, purge.purgeExpired(), "the rest, in batches of 10");
        assertEquals("5", sql().query("SELECT count(*)::text FROM idempotency_record"));
        assertEquals("0", sql().query("SELECT count(*)::text FROM idempotency_record WHERE expires_at < now()"));
        assertEquals(15, purge.lastRun().orElseThrow().deleted());
    }

    @Test
    void purgeJobIsRegisteredWithTheDatabaseStore() {
        assertNotNull(scheduler.getScheduledJob(PurgeJob.IDENTITY));
    }

    private void insert(String id, String scope, String state, String worker, String recordedAt, String expiresAt)
            throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO idempotency_record"
                        + " (scoped_key, scope, state, claimed_by, recorded_at, expires_at) VALUES (?, ?, ?, ?, "
                        + recordedAt + ", " + expiresAt + ")")) {
            ps.setString(1, id);
            ps.setString(2, scope);
            ps.setString(3, state);
            ps.setString(4, worker);
            ps.executeUpdate();
        }
    }

}
