package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;

import javax.sql.DataSource;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkus.narayana.jta.QuarkusTransaction;

/**
 * The production store: the {@link IdempotencyRecord} table on PostgreSQL.
 * <p>
 * The claim is one statement, {@code INSERT ... ON CONFLICT}, committed on its own: the row appearing is the answer to
 * "am I the first?", a stale CLAIMED row is taken over in the same statement, and a duplicate costs no exception and
 * no error log. Outside a transaction (the usual case: the claim runs before {@code @Transactional} begins) it is one
 * round trip in auto-commit; inside one, it runs in a new transaction of its own. Confirm and forget are fenced by
 * this worker's id; confirm joins the caller's transaction when there is one. Statements go straight to the
 * persistence unit's datasource with JDBC (the entity maps the same table for schema generation and reading).
 * Timestamps are the database's, so instances with skewed clocks agree.
 */
public class DatabaseIdempotencyStore implements IdempotencyStore {

    private final DataSource dataSource;
    private final TransactionManager transactions;
    private final String worker;
    private final boolean asynchronousClaimCommit;
    private final String claimSql;
    private final String insertConfirmedSql;
    private final String takeOverConfirmedSql;
    private final String confirmSql;
    private final String forgetSql;
    private final String renewSql;
    private final String purgeSql;
    private final String oldestClaimSql;
    private final String checkSql;
    private final String stateSql;

    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            String worker) {
        this(dataSource, transactions, table, worker, false);
    }

    /**
     * @param asynchronousClaimCommit whether a claim's commit skips waiting for its WAL flush (see
     *        {@code quarkus.idempotency.database.asynchronous-claim-commit})
     */
    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            String worker, boolean asynchronousClaimCommit) {
        this.dataSource = dataSource;
        this.transactions = transactions;
        this.worker = worker;
        this.asynchronousClaimCommit = asynchronousClaimCommit;
        this.claimSql = claimStatement(table, asynchronousClaimCommit);
        this.insertConfirmedSql = "INSERT INTO " + table + " (scoped_key, scope, state, claimed_by, recorded_at,"
                + " expires_at) VALUES (?, ?, 'CONFIRMED', ?, now(), now() + ? * interval '1 millisecond')"
                + " ON CONFLICT (scoped_key) DO NOTHING";
        this.takeOverConfirmedSql = "UPDATE " + table + " SET state = 'CONFIRMED', claimed_by = ?, recorded_at = now(),"
                + " expires_at = now() + ? * interval '1 millisecond'"
                + " WHERE scoped_key = ? AND state = 'CLAIMED' AND recorded_at < now() - ? * interval '1 millisecond'";
        this.confirmSql = confirmStatement(table);
        this.forgetSql = "DELETE FROM " + table + " WHERE scoped_key = ? AND state = 'CLAIMED' AND claimed_by = ?";
        this.renewSql = "UPDATE " + table + " SET recorded_at = now()"
                + " WHERE scoped_key = ANY (?) AND state = 'CLAIMED' AND claimed_by = ?";
        // SKIP LOCKED: instances purging at once take different rows instead of waiting for each other.
        this.purgeSql = "DELETE FROM " + table + " WHERE scoped_key IN (SELECT scoped_key FROM " + table
                + " WHERE expires_at < now() ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)";
        this.oldestClaimSql = "SELECT extract(epoch FROM now() - min(recorded_at))::float8 FROM " + table
                + " WHERE state = 'CLAIMED'";
        this.checkSql = "SELECT 1 FROM " + table + " WHERE 1 = 0";
        this.stateSql = "SELECT state FROM " + table + " WHERE scoped_key = ?";
    }

    /**
     * The claim: one statement. {@code existing} reads the key's row; when there is none, or only a stale claim, the
     * INSERT inserts it, or (ON CONFLICT) takes the stale claim over, re-checking staleness under the row lock. A
     * duplicate of a confirmed key (or of a live claim) only reads: no row lock, no WAL, nothing to flush at commit.
     * When a concurrent transaction inserted the key after this statement's snapshot was taken, neither part returns
     * a row, and a second statement (a new snapshot) reads the state that won.
     * <p>
     * With {@code asynchronousCommit}, the row the INSERT writes comes from a one-row CTE that sets
     * {@code synchronous_commit} off for this statement's transaction only ({@code set_config(..., true)}): whenever
     * the statement writes, its commit does not wait for the WAL flush. Still one round trip; nothing leaks to the
     * pooled connection.
     * <p>
     * Parameters: 1 and 2 the scoped key, 3 the scope, 4 the worker, 5 the retention in ms, 6 and 7 the claim timeout
     * in ms. Returns one row, NEW, TAKEN_OVER, DONE or BUSY, or none.
     *
     * @param table the table
     * @param asynchronousCommit whether the claim's commit skips waiting for the WAL flush
     * @return the SQL
     */
    public static String claimStatement(String table, boolean asynchronousCommit) {
        return "WITH " + (asynchronousCommit
                ? "commit_mode AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)), "
                : "")
                + "existing AS (SELECT state, recorded_at FROM " + table + " WHERE scoped_key = ?),"
                + " claimed AS (INSERT INTO " + table + " AS r (scoped_key, scope, state, claimed_by, recorded_at,"
                + " expires_at) SELECT ?, ?, 'CLAIMED', ?, now(), now() + ? * interval '1 millisecond'"
                + (asynchronousCommit ? " FROM commit_mode" : "")
                + " WHERE NOT EXISTS (SELECT 1 FROM existing WHERE state = 'CONFIRMED'"
                + " OR recorded_at >= now() - ? * interval '1 millisecond')"
                + " ON CONFLICT (scoped_key) DO UPDATE SET state = excluded.state, claimed_by = excluded.claimed_by,"
                + " recorded_at = excluded.recorded_at, expires_at = excluded.expires_at"
                + " WHERE r.state = 'CLAIMED' AND r.recorded_at < now() - ? * interval '1 millisecond'"
                + " RETURNING CASE WHEN xmax = 0 THEN 'NEW' ELSE 'TAKEN_OVER' END AS outcome)"
                + " SELECT outcome FROM claimed"
                + " UNION ALL SELECT CASE WHEN state = 'CONFIRMED' THEN 'DONE' ELSE 'BUSY' END FROM existing"
                + " WHERE NOT EXISTS (SELECT 1 FROM claimed)";
    }

    /**
     * The confirm: parameters 1 the retention in ms, 2 the scoped key, 3 the worker; fenced by the worker.
     *
     * @param table the table
     * @return the SQL
     */
    public static String confirmStatement(String table) {
        return "UPDATE " + table + " SET state = 'CONFIRMED', recorded_at = now(),"
                + " expires_at = now() + ? * interval '1 millisecond'"
                + " WHERE scoped_key = ? AND state = 'CLAIMED' AND claimed_by = ?";
    }

    @Override
    public ClaimResult claim(String scope, String key, Duration retention, Duration claimTimeout) {
        return onItsOwn(() -> claimOnItsOwn(scope, key, retention, claimTimeout));
    }

    @Override
    public boolean supportsClaimInTransaction() {
        return true;
    }

    /**
     * Inside the handler's transaction the common case, a new key, is a plain insert: the row needs no claim phase, and
     * a concurrent delivery of the key waits on it until this transaction ends. Only on a conflict is the existing row
     * looked at, in statements of their own (a fresh snapshot each): a stale claim of the other mode is taken over,
     * a confirmed key is a duplicate, anything else is busy.
     */
    @Override
    public ClaimResult claimConfirmedInTransaction(String scope, String key, Duration retention,
            Duration claimTimeout) {
        String id = StorageKeys.of(scope, key);
        try (Connection c = dataSource.getConnection()) {
            try (PreparedStatement ps = c.prepareStatement(insertConfirmedSql)) {
                ps.setString(1, id);
                ps.setString(2, StorageKeys.scopeColumn(scope));
                ps.setString(3, worker);
                ps.setLong(4, retention.toMillis());
                if (ps.executeUpdate() == 1) {
                    return ClaimResult.NEW;
                }
            }
            try (PreparedStatement ps = c.prepareStatement(takeOverConfirmedSql)) {
                ps.setString(1, worker);
                ps.setLong(2, retention.toMillis());
                ps.setString(3, id);
                ps.setLong(4, claimTimeout.toMillis());
                if (ps.executeUpdate() == 1) {
                    return ClaimResult.TAKEN_OVER;
                }
            }
            return state(c, id);
        } catch (SQLException e) {
            throw new IllegalStateException("Claiming " + scope + ":" + key + " failed: " + e.getMessage(), e);
        }
    }

    private ClaimResult state(Connection c, String id) throws SQLException {
        try (PreparedStatement state = c.prepareStatement(stateSql)) {
            state.setString(1, id);
            try (ResultSet rs = state.executeQuery()) {
                return rs.next() && "CONFIRMED".equals(rs.getString(1)) ? ClaimResult.DONE : ClaimResult.BUSY;
            }
        }
    }

    private ClaimResult claimOnItsOwn(String scope, String key, Duration retention, Duration claimTimeout) {
        String id = StorageKeys.of(scope, key);
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(claimSql)) {
            ps.setString(1, id);
            ps.setString(2, id);
            ps.setString(3, StorageKeys.scopeColumn(scope));
            ps.setString(4, worker);
            ps.setLong(5, retention.toMillis());
            ps.setLong(6, claimTimeout.toMillis());
            ps.setLong(7, claimTimeout.toMillis());
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return ClaimResult.valueOf(rs.getString(1));
                }
            }
            return state(c, id);
        } catch (SQLException e) {
            throw new IllegalStateException("Claiming " + scope + ":" + key + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public boolean confirm(String scope, String key, Duration retention) {
        // Inside the handler's transaction when there is one: "the work committed" and "the key is a fact" are one
        // event. The datasource hands out the connection enlisted in that transaction.
        String id = StorageKeys.of(scope, key);
        return update(confirmSql, ps -> {
            ps.setLong(1, retention.toMillis());
            ps.setString(2, id);
            ps.setString(3, worker);
        }) == 1;
    }

    @Override
    public boolean forget(String scope, String key) {
        String id = StorageKeys.of(scope, key);
        return onItsOwn(() -> update(forgetSql, ps -> {
            ps.setString(1, id);
            ps.setString(2, worker);
        })) == 1;
    }

    @Override
    public void renew(Collection<ScopedKey> keys) {
        if (keys.isEmpty()) {
            return;
        }
        String[] ids = new String[keys.size()];
        int i = 0;
        for (ScopedKey k : keys) {
            ids[i++] = StorageKeys.of(k.scope(), k.key());
        }
        onItsOwn(() -> update(renewSql, (c, ps) -> {
            ps.setArray(1, c.createArrayOf("varchar", ids));
            ps.setString(2, worker);
        }));
    }

    @Override
    public int purgeExpired(int limit) {
        return onItsOwn(() -> update(purgeSql, ps -> ps.setInt(1, limit)));
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        return onItsOwn(() -> {
            try (Connection c = dataSource.getConnection();
                    PreparedStatement ps = c.prepareStatement(oldestClaimSql);
                    ResultSet rs = ps.executeQuery()) {
                double seconds = rs.next() ? rs.getDouble(1) : 0;
                return rs.wasNull() ? Optional.<Duration> empty()
                        : Optional.of(Duration.ofMillis((long) (seconds * 1000)));
            } catch (SQLException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
    }

    @Override
    public void check() {
        onItsOwn(() -> {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(checkSql)) {
                ps.executeQuery().close();
                return null;
            } catch (SQLException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
    }

    @Override
    public boolean joinsTransactions() {
        return true;
    }

    /** @return whether a claim's commit skips waiting for its WAL flush */
    public boolean asynchronousClaimCommit() {
        return asynchronousClaimCommit;
    }

    /** @return the id this store fences claims with */
    public String worker() {
        return worker;
    }

    interface Binder {
        void bind(Connection c, PreparedStatement ps) throws SQLException;
    }

    interface SimpleBinder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    private int update(String sql, SimpleBinder binder) {
        return update(sql, (c, ps) -> binder.bind(ps));
    }

    private int update(String sql, Binder binder) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            binder.bind(c, ps);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    // Outside a transaction a connection is in auto-commit: the statement commits on its own in one round trip.
    // Inside one (a caller's), the work must not join it, so it runs in a new transaction.
    private <T> T onItsOwn(java.util.function.Supplier<T> work) {
        if (inTransaction()) {
            return QuarkusTransaction.requiringNew().call(work::get);
        }
        return work.get();
    }

    private boolean inTransaction() {
        try {
            return transactions.getStatus() != Status.STATUS_NO_TRANSACTION;
        } catch (SystemException e) {
            throw new IllegalStateException(e);
        }
    }
}
