package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.Sql;
import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.idempotency.database.asynchronous-claim-commit}: the claim's own transaction commits without waiting
 * for the WAL flush, and nothing else changes: the same answers, the same race, the same fencing, and no setting left
 * on the pooled connections.
 */
class AsynchronousClaimCommitTest {

    static final Duration RETENTION = Duration.ofHours(24);
    static final Duration CLAIM_TIMEOUT = Duration.ofMinutes(5);
    static final String ASYNC_CLAIM = DatabaseIdempotencyStore.claimStatement("idempotency_record", true);

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], ClaimRace.class)
            .overrideConfigKey("quarkus.idempotency.database.asynchronous-claim-commit", "true");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    TransactionManager transactions;

    private Sql sql() {
        return new Sql(dataSource);
    }

    @BeforeEach
    void clean() throws SQLException {
        sql().execute("DELETE FROM idempotency_record");
    }

    @Test
    void theClaimTurnsSynchronousCommitOffForItsOwnTransactionOnly() throws SQLException {
        // on a connection of its own, in an explicit transaction, so that the setting can be read before the commit
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), "")) {
            c.createStatement().execute("SET synchronous_commit = on"); // whatever the server's default
            c.setAutoCommit(false);
            assertEquals("NEW", claim(c, ASYNC_CLAIM, "mode:new"));
            assertEquals("off", setting(c), "a new key: the claim's transaction commits asynchronously");
            c.commit();
            assertEquals("on", setting(c), "transaction-local: the connection is back to its own setting");

            c.createStatement().execute("UPDATE idempotency_record SET recorded_at = now() - interval '1 hour'");
            c.commit();
            assertEquals("TAKEN_OVER", claim(c, ASYNC_CLAIM, "mode:new"));
            assertEquals("off", setting(c), "a takeover writes too, and commits asynchronously");
            c.rollback();

            assertEquals("NEW", claim(c, DatabaseIdempotencyStore.claimStatement("idempotency_record", false),
                    "mode:sync"));
            assertEquals("on", setting(c), "the default claim leaves synchronous_commit alone");
            c.rollback();
        }
    }

    @Test
    void theConfiguredStoreClaimsAsynchronouslyAndLeavesItsConnectionsAsTheyWere() throws SQLException {
        assertTrue(store.asynchronousClaimCommit(), "the setting reaches the store");
        String serverDefault;
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), "")) {
            serverDefault = setting(c);
        }
        for (int i = 0; i < 20; i++) {
            assertEquals(ClaimResult.NEW, store.claim("pool", "k" + i, RETENTION, CLAIM_TIMEOUT));
            assertEquals(serverDefault, sql().query("SHOW synchronous_commit"), "no pooled connection keeps it");
        }
    }

    @Test
    void answersAndFencingAreUnchanged() throws SQLException {
        DatabaseIdempotencyStore other = new DatabaseIdempotencyStore(dataSource, transactions, "idempotency_record",
                "other-worker", true);
        assertEquals(ClaimResult.NEW, store.claim("a", "k", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.BUSY, other.claim("a", "k", RETENTION, CLAIM_TIMEOUT));
        assertFalse(other.confirm("a", "k", RETENTION), "fenced");
        assertTrue(store.confirm("a", "k", RETENTION));
        assertEquals(ClaimResult.DONE, other.claim("a", "k", RETENTION, CLAIM_TIMEOUT));

        assertEquals(ClaimResult.NEW, store.claim("a", "stale", RETENTION, CLAIM_TIMEOUT));
        sql().execute("UPDATE idempotency_record SET recorded_at = now() - interval '1 hour'"
                + " WHERE scoped_key = 'a:stale'");
        assertEquals(ClaimResult.TAKEN_OVER, other.claim("a", "stale", RETENTION, CLAIM_TIMEOUT));
        assertFalse(store.forget("a", "stale"), "fenced");
        assertTrue(other.forget("a", "stale"));
        assertEquals(ClaimResult.NEW, store.claim("a", "stale", RETENTION, CLAIM_TIMEOUT), "forgotten: runs again");
    }

    @Test
    void fourWorkersRaceWithAsynchronousClaimsExactlyOneWinsEach() throws Exception {
        List<DatabaseIdempotencyStore> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            workers.add(new DatabaseIdempotencyStore(dataSource, transactions, "idempotency_record", "racer-" + t,
                    true));
        }
        ClaimRace.Result race = ClaimRace.run(workers, "race", ClaimRace.keys(500), (worker, key) -> {
        });
        assertEquals(500, race.wins().size(), "every key was won");
        race.wins().forEach((key, count) -> assertEquals(1, count.get(), "exactly one claim of " + key));
        assertEquals(500, race.answered(ClaimResult.NEW));
        assertEquals(1_500, race.answered(ClaimResult.BUSY), "no key was confirmed: the rest are busy");
        assertEquals("500", sql().query("SELECT count(*) FROM idempotency_record WHERE state = 'CLAIMED'"));
    }

    private static String claim(Connection c, String sql, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, id);
            ps.setString(2, id);
            ps.setString(3, "mode");
            ps.setString(4, "test-worker");
            ps.setLong(5, RETENTION.toMillis());
            ps.setLong(6, CLAIM_TIMEOUT.toMillis());
            ps.setLong(7, CLAIM_TIMEOUT.toMillis());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static String setting(Connection c) throws SQLException {
        try (ResultSet rs = c.createStatement().executeQuery("SELECT current_setting('synchronous_commit')")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
