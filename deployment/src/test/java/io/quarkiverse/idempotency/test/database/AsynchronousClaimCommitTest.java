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

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.RecordStatements;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.idempotency.database.asynchronous-claim-commit}: the claim's own transaction commits without waiting
 * for the WAL flush, and nothing else changes: the same answers, the same race, the same fencing, and no setting left
 * on the pooled connections.
 */
class AsynchronousClaimCommitTest {

    static final Duration RETENTION = Duration.ofHours(24);
    static final Duration LEASE = Duration.ofSeconds(30);
    static final String ASYNC_CLAIM = RecordStatements.claim("idempotency_record", true);

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], ClaimRace.class)
            .overrideConfigKey("quarkus.idempotency.database.asynchronous-claim-commit", "true")
            // one table's claim statement is run by hand below
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none")
            // one pooled connection: the test reads the setting on the very connection the store claimed on
            .overrideConfigKey("quarkus.datasource.jdbc.max-size", "1");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

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
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword())) {
            c.createStatement().execute("SET synchronous_commit = on"); // whatever the server's default
            c.setAutoCommit(false);
            assertEquals("NEW", claim(c, ASYNC_CLAIM, "mode:new"));
            assertEquals("off", setting(c), "a new key: the claim's transaction commits asynchronously");
            c.commit();
            assertEquals("on", setting(c), "transaction-local: the connection is back to its own setting");

            c.createStatement().execute("UPDATE idempotency_record SET lease_until = now() - interval '1 second'");
            c.commit();
            assertEquals("TAKEN_OVER", claim(c, ASYNC_CLAIM, "mode:new"));
            assertEquals("off", setting(c), "a takeover writes too, and commits asynchronously");
            c.rollback();

            assertEquals("NEW", claim(c, RecordStatements.claim("idempotency_record", false),
                    "mode:sync"));
            assertEquals("on", setting(c), "the default claim leaves synchronous_commit alone");
            c.rollback();
        }
    }

    @Test
    void theConfiguredStoreClaimsAsynchronouslyAndLeavesItsConnectionsAsTheyWere() throws SQLException {
        assertTrue(store.asynchronousClaimCommit(), "the setting reaches the store");
        String serverDefault;
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword())) {
            serverDefault = setting(c);
        }
        for (int i = 0; i < 20; i++) {
            assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("pool", "k" + i), "t" + i, LEASE, RETENTION)
                    .result());
            assertEquals(serverDefault, sql().query("SHOW synchronous_commit"), "the pooled connection does not keep it");
        }
    }

    @Test
    void answersAndFencingAreUnchanged() throws SQLException {
        ScopedKey key = new ScopedKey("a", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "a1", LEASE, RETENTION).result());
        assertEquals(ClaimResult.BUSY, store.claim(key, "b", LEASE, RETENTION).result());
        assertFalse(store.confirm(key, "b", RETENTION), "fenced");
        assertTrue(store.confirm(key, "a1", RETENTION));
        assertEquals(ClaimResult.DONE, store.claim(key, "b", LEASE, RETENTION).result());

        ScopedKey stale = new ScopedKey("a", "stale");
        assertEquals(ClaimResult.NEW, store.claim(stale, "a2", LEASE, RETENTION).result());
        sql().execute("UPDATE idempotency_record SET lease_until = now() - interval '1 second'"
                + " WHERE scoped_key = 'a:stale'");
        assertEquals(ClaimResult.TAKEN_OVER, store.claim(stale, "b2", LEASE, RETENTION).result());
        assertFalse(store.release(stale, "a2"), "fenced");
        assertTrue(store.release(stale, "b2"));
        assertEquals(ClaimResult.NEW, store.claim(stale, "a3", LEASE, RETENTION).result(), "released: runs again");
    }

    @Test
    void fourWorkersRaceWithAsynchronousClaimsExactlyOneWinsEach() throws Exception {
        ClaimRace.Result race = ClaimRace.run(store, 4, "race", ClaimRace.keys(500), (key, token) -> {
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
            ps.setString(4, "test-worker#" + id);
            ps.setLong(5, LEASE.toMillis());
            ps.setLong(6, RETENTION.toMillis());
            ps.setString(7, "message-" + id);
            ps.setString(8, null);
            ps.setString(9, id);
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
