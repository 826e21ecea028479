package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import javax.sql.DataSource;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkus.narayana.jta.QuarkusTransaction;

/**
 * The production store: the {@link IdempotencyRecord} table on PostgreSQL, written with the statements of
 * {@link RecordStatements} through plain JDBC on the persistence unit's datasource (the entity maps the same table for
 * schema generation and reading).
 * <p>
 * Lease-mode statements commit on their own: outside a transaction (the usual case) each is one round trip in
 * auto-commit; inside a caller's transaction it runs in a new transaction of its own, so that it never joins (nor
 * waits for) the caller's. In-transaction claims and confirms join the caller's transaction: the datasource hands out
 * the connection enlisted in it.
 */
public class DatabaseIdempotencyStore implements IdempotencyStore {

    /** How many times an in-transaction claim looks again when the key's holder ended between two statements. */
    private static final int IN_TRANSACTION_ROUNDS = 3;
    private static final int FAILURE_LENGTH = 1000;

    private static final String UNDEFINED_TABLE = "42P01";

    private final DataSource dataSource;
    private final String table;
    private final boolean joinsTransactions;
    private final TransactionManager transactions;
    private final boolean asynchronousClaimCommit;
    private final RecordStatements sql;

    /**
     * @param asynchronousClaimCommit whether a lease-mode claim's commit skips waiting for its WAL flush (see
     *        {@code quarkus.idempotency.database.asynchronous-claim-commit})
     */
    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            boolean asynchronousClaimCommit) {
        this(dataSource, transactions, table, asynchronousClaimCommit, true);
    }

    /**
     * @param joinsTransactions whether handlers' transactions are on this datasource, so that keys can be written in
     *        them (see {@link #joinsTransactions()})
     */
    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            boolean asynchronousClaimCommit, boolean joinsTransactions) {
        this.joinsTransactions = joinsTransactions;
        this.dataSource = dataSource;
        this.table = table;
        this.transactions = transactions;
        this.asynchronousClaimCommit = asynchronousClaimCommit;
        this.sql = new RecordStatements(table, asynchronousClaimCommit);
    }

    /**
     * The lease-mode claim statement, for benchmarks and tests that run it by hand; parameters as documented on
     * {@link RecordStatements#claim}.
     */
    public static String claimStatement(String table, boolean asynchronousCommit) {
        return RecordStatements.claim(table, asynchronousCommit);
    }

    /** The in-transaction claim statement; parameters as documented on {@link RecordStatements#claimInTransaction}. */
    public static String claimInTransactionStatement(String table) {
        return RecordStatements.claimInTransaction(table);
    }

    /** The confirm statement; parameters as documented on {@link RecordStatements#confirm}. */
    public static String confirmStatement(String table) {
        return RecordStatements.confirm(table);
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
        String id = StorageKeys.of(key);
        return onItsOwn(() -> {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.claim)) {
                ps.setString(1, id);
                ps.setString(2, id);
                ps.setString(3, StorageKeys.scopeColumn(key.scope()));
                ps.setString(4, token);
                ps.setLong(5, lease.toMillis());
                ps.setLong(6, retention.toMillis());
                ps.setString(7, id);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return claimOf(rs.getString(1), rs.getInt(2), rs.getLong(3), rs.wasNull());
                    }
                }
                // A concurrent transaction wrote the key after this statement's snapshot, or holds it: look again.
                try (PreparedStatement state = c.prepareStatement(sql.state)) {
                    state.setString(1, id);
                    try (ResultSet rs = state.executeQuery()) {
                        if (!rs.next()) {
                            return Claim.BUSY; // an in-transaction delivery holds it, not committed yet
                        }
                        return "CONFIRMED".equals(rs.getString(1)) ? Claim.DONE
                                : claimOf("BUSY", 0, rs.getLong(2), rs.wasNull());
                    }
                }
            } catch (SQLException e) {
                throw failed("claim", key, e);
            }
        });
    }

    private static Claim claimOf(String outcome, int attempts, long leaseLeftMillis, boolean noLease) {
        ClaimResult result = ClaimResult.valueOf(outcome);
        return switch (result) {
            case NEW, TAKEN_OVER -> Claim.claimed(result, attempts);
            case DONE -> Claim.DONE;
            case BUSY -> noLease || leaseLeftMillis <= 0 ? Claim.BUSY : Claim.busyFor(Duration.ofMillis(leaseLeftMillis));
        };
    }

    /**
     * @return whether keys are written inside handlers' transactions: only when those transactions are on this
     *         store's datasource. Keys on a datasource of their own would make a second non-XA resource in the
     *         handler's transaction, which the transaction manager refuses: the store then claims and confirms on
     *         its own, on a lease.
     */
    @Override
    public boolean joinsTransactions() {
        return joinsTransactions;
    }

    /**
     * Inside the handler's transaction the common case, a new key, is one guarded insert. Only when it inserts nothing
     * is the key looked at again: held by another delivery right now (busy), confirmed (a duplicate), or free to take
     * over (failed, dead-lettered, or a lease that ran out) under the advisory lock this transaction then holds.
     */
    @Override
    public Claim claimInTransaction(ScopedKey key, String token, Duration retention) {
        String id = StorageKeys.of(key);
        try (Connection c = dataSource.getConnection()) {
            for (int round = 0; round < IN_TRANSACTION_ROUNDS; round++) {
                try (PreparedStatement ps = c.prepareStatement(sql.claimInTransaction)) {
                    ps.setString(1, id);
                    ps.setString(2, StorageKeys.scopeColumn(key.scope()));
                    ps.setString(3, token);
                    ps.setLong(4, retention.toMillis());
                    ps.setString(5, id);
                    if (ps.executeUpdate() == 1) {
                        return Claim.claimed(ClaimResult.NEW, 0);
                    }
                }
                boolean leaseRanOut;
                try (PreparedStatement look = c.prepareStatement(sql.lookInTransaction)) {
                    look.setString(1, id);
                    look.setString(2, id);
                    try (ResultSet rs = look.executeQuery()) {
                        rs.next();
                        boolean locked = rs.getBoolean(1);
                        String state = rs.getString(2);
                        if (!locked) {
                            return Claim.BUSY;
                        }
                        if (state == null) {
                            continue; // its holder rolled back since: insert again
                        }
                        if ("CONFIRMED".equals(state)) {
                            return Claim.DONE;
                        }
                        leaseRanOut = "CLAIMED".equals(state);
                        if (leaseRanOut && !rs.getBoolean(4)) {
                            return Claim.BUSY; // a live lease-mode claim
                        }
                    }
                }
                try (PreparedStatement take = c.prepareStatement(sql.takeOverInTransaction)) {
                    take.setString(1, token);
                    take.setLong(2, retention.toMillis());
                    take.setString(3, id);
                    try (ResultSet rs = take.executeQuery()) {
                        if (rs.next()) {
                            // a retry of a failed (or replay of a dead-lettered) key is a new claim, not a takeover
                            return Claim.claimed(leaseRanOut ? ClaimResult.TAKEN_OVER : ClaimResult.NEW, rs.getInt(1));
                        }
                    }
                }
            }
            return Claim.BUSY;
        } catch (SQLException e) {
            throw failed("claim", key, e);
        }
    }

    @Override
    public boolean confirm(ScopedKey key, String token, Duration retention) {
        return onItsOwn(() -> confirmInTransaction(key, token, retention));
    }

    @Override
    public boolean confirmInTransaction(ScopedKey key, String token, Duration retention) {
        String id = StorageKeys.of(key);
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.confirm)) {
            ps.setLong(1, retention.toMillis());
            ps.setString(2, id);
            ps.setString(3, token);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw failed("confirm", key, e);
        }
    }

    @Override
    public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        String id = StorageKeys.of(key);
        String reason = failure == null ? null
                : failure.length() <= FAILURE_LENGTH ? failure : failure.substring(0, FAILURE_LENGTH);
        return onItsOwn(() -> {
            try (Connection c = dataSource.getConnection()) {
                try (PreparedStatement ps = c.prepareStatement(sql.recordFailureOfClaim)) {
                    ps.setInt(1, maxAttempts);
                    ps.setString(2, reason);
                    ps.setLong(3, retention.toMillis());
                    ps.setString(4, id);
                    ps.setString(5, token);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next()) {
                            return rs.getInt(1);
                        }
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(sql.recordFailureAfterRollback)) {
                    ps.setString(1, id);
                    ps.setString(2, StorageKeys.scopeColumn(key.scope()));
                    ps.setInt(3, maxAttempts);
                    ps.setString(4, token);
                    ps.setLong(5, retention.toMillis());
                    ps.setString(6, reason);
                    ps.setString(7, id);
                    ps.setInt(8, maxAttempts);
                    try (ResultSet rs = ps.executeQuery()) {
                        return rs.next() ? rs.getInt(1) : 0;
                    }
                }
            } catch (SQLException e) {
                throw failed("count a failed attempt of", key, e);
            }
        });
    }

    @Override
    public boolean release(ScopedKey key, String token) {
        String id = StorageKeys.of(key);
        return onItsOwn(() -> {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.release)) {
                ps.setString(1, id);
                ps.setString(2, token);
                ps.setString(3, id);
                ps.setString(4, token);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() && rs.getLong(1) > 0;
                }
            } catch (SQLException e) {
                throw failed("release", key, e);
            }
        });
    }

    @Override
    public void renew(Collection<HeldClaim> claims) {
        if (claims.isEmpty()) {
            return;
        }
        String[] ids = new String[claims.size()];
        String[] tokens = new String[ids.length];
        Long[] leases = new Long[ids.length];
        int i = 0;
        for (HeldClaim held : claims) {
            ids[i] = StorageKeys.of(held.key());
            tokens[i] = held.token();
            leases[i++] = held.lease().toMillis();
        }
        onItsOwn(() -> {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.renew)) {
                ps.setArray(1, c.createArrayOf("varchar", ids));
                ps.setArray(2, c.createArrayOf("varchar", tokens));
                ps.setArray(3, c.createArrayOf("bigint", leases));
                return ps.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException("Renewing " + ids.length + " claims failed: " + e.getMessage(), e);
            }
        });
    }

    @Override
    public int purgeExpired(int limit) {
        return onItsOwn(() -> {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.purge)) {
                ps.setInt(1, limit);
                return ps.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException("Purging expired keys failed: " + e.getMessage(), e);
            }
        });
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        return onItsOwn(() -> {
            try (Connection c = dataSource.getConnection();
                    PreparedStatement ps = c.prepareStatement(sql.oldestClaim);
                    ResultSet rs = ps.executeQuery()) {
                double seconds = rs.next() ? rs.getDouble(1) : 0;
                return rs.wasNull() ? Optional.<Duration> empty()
                        : Optional.of(Duration.ofMillis((long) (seconds * 1000)));
            } catch (SQLException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
    }

    /**
     * @throws StoreMisconfiguredException when the table is missing or from an older version, or the database is not
     *         PostgreSQL, naming the remedy
     */
    @Override
    public void check() {
        onItsOwn(() -> {
            try (Connection c = dataSource.getConnection()) {
                String product = c.getMetaData().getDatabaseProductName();
                if (!"PostgreSQL".equalsIgnoreCase(product)) {
                    throw new StoreMisconfiguredException("The idempotency database store runs PostgreSQL's SQL, but"
                            + " its datasource is " + product + "; use a PostgreSQL datasource, or supply an"
                            + " IdempotencyStore bean of your own", null);
                }
                try (PreparedStatement ps = c.prepareStatement(sql.check)) {
                    ps.executeQuery().close();
                }
                List<String> missing = missingColumns(c);
                List<String> remedy = new java.util.ArrayList<>(sql.schema);
                String outdated = outdatedStateConstraint(c);
                if (outdated != null) {
                    // e.g. a table Hibernate ORM's schema update brought forward: it adds columns, never constraints
                    missing.add("the states FAILED and DEAD_LETTERED in its state check constraint " + outdated);
                    remedy.add(RecordStatements.stateConstraint(table, outdated));
                }
                if (!missing.isEmpty()) {
                    throw new StoreMisconfiguredException("The idempotency table '" + table + "' is from an older"
                            + " version of the extension: it lacks " + String.join(", ", missing) + ". Bring it up to"
                            + " date with " + String.join("; ", remedy)
                            + " (quarkus.idempotency.database.schema-management=update does it at startup; the shipped"
                            + " Flyway migrations and Liquibase changelog do too)", null);
                }
                return null;
            } catch (SQLException e) {
                if (UNDEFINED_TABLE.equals(e.getSQLState())) {
                    throw new StoreMisconfiguredException(missingTable(table), e);
                }
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
    }

    private List<String> missingColumns(Connection c) throws SQLException {
        java.util.Set<String> present = new java.util.HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.columns)) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    present.add(rs.getString(1));
                }
            }
        }
        List<String> missing = new java.util.ArrayList<>();
        for (String column : RecordStatements.COLUMNS.keySet()) {
            if (!present.contains(column)) {
                missing.add(column);
            }
        }
        return missing;
    }

    /**
     * Creates the table, or brings one of an earlier version up to date, in one transaction that instances starting
     * at once take in turn (a transaction-scoped advisory lock): every statement does nothing when its part is there.
     */
    public void updateSchema() {
        onItsOwn(() -> {
            try (Connection c = dataSource.getConnection()) {
                boolean autoCommit = c.getAutoCommit();
                c.setAutoCommit(false);
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_xact_lock(hashtextextended('quarkus-idempotency schema', 0))");
                    // Up to date (every start but the first after an upgrade): no DDL, so no table lock that would
                    // queue the running instances' claims behind this one.
                    if (!upToDate(c)) {
                        // A table busy with long transactions fails this start rather than stalling everyone.
                        s.execute("SET LOCAL lock_timeout = '10s'");
                        for (String statement : sql.schema) {
                            s.execute(statement);
                        }
                        String outdated = outdatedStateConstraint(c);
                        if (outdated != null) {
                            s.execute(RecordStatements.stateConstraint(table, outdated));
                        }
                    }
                    c.commit();
                } catch (SQLException e) {
                    c.rollback();
                    throw e;
                } finally {
                    c.setAutoCommit(autoCommit);
                }
                return null;
            } catch (SQLException e) {
                throw new IllegalStateException("Could not create or update the idempotency table '" + table + "': "
                        + e.getMessage(), e);
            }
        });
    }

    // The table, its columns, its state constraint and its two indexes are all there as this version wants them.
    private boolean upToDate(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.present)) {
            ps.setString(1, table);
            ps.setString(2, table + "_expires_at");
            ps.setString(3, table + "_claims");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1) || !rs.getBoolean(2) || !rs.getBoolean(3)) {
                    return false;
                }
            }
        }
        return missingColumns(c).isEmpty() && outdatedStateConstraint(c) == null;
    }

    // The state column's check constraint of an earlier version lists fewer states: its name, to replace it.
    private String outdatedStateConstraint(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.stateCheck)) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (!rs.getString(2).contains("DEAD_LETTERED")) {
                        return rs.getString(1);
                    }
                }
            }
        }
        return null;
    }

    /** @return the message naming the remedies for a missing table */
    static String missingTable(String table) {
        return "The idempotency table '" + table + "' does not exist. Create it in one of these ways: let the extension"
                + " create it at startup (quarkus.idempotency.database.schema-management=update); with Flyway, add"
                + " classpath:db/idempotency/flyway to quarkus.flyway.locations (a repeatable migration, named after"
                + " this table); with Liquibase, include db/idempotency/liquibase/idempotency-changelog.xml"
                + (IdempotencyRecord.DEFAULT_TABLE.equals(table) ? ""
                        : " (change-log parameter idempotency.table=" + table.substring(table.indexOf('.') + 1) + ")")
                + "; or with Hibernate ORM (quarkus.hibernate-orm.schema-management.strategy=update). The statements: "
                + String.join("; ", RecordStatements.schema(table));
    }

    /**
     * What the table holds, for display (the Dev UI): keys by state, the oldest live claims, the most recent keys.
     *
     * @param rows how many claims and recent keys
     */
    public Description describe(int rows) {
        return onItsOwn(() -> {
            try (Connection c = dataSource.getConnection()) {
                Map<String, Long> counts = new java.util.TreeMap<>();
                for (IdempotencyRecord.State state : IdempotencyRecord.State.values()) {
                    counts.put(state.name(), 0L);
                }
                try (PreparedStatement ps = c.prepareStatement(sql.countByState); ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        counts.put(rs.getString(1), rs.getLong(2));
                    }
                }
                return new Description(counts, records(c, sql.oldestClaims, rows), records(c, sql.mostRecent, rows));
            } catch (SQLException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
    }

    private static List<Map<String, Object>> records(Connection c, String query, int rows) throws SQLException {
        List<Map<String, Object>> records = new java.util.ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(query)) {
            ps.setInt(1, rows);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Map<String, Object> record = new java.util.LinkedHashMap<>();
                    record.put("key", RecordStatements.unscoped(rs.getString(1), rs.getString(2)));
                    record.put("scope", rs.getString(2));
                    record.put("state", rs.getString(3));
                    record.put("claimedBy", rs.getString(4));
                    record.put("recordedAt", String.valueOf(rs.getTimestamp(5).toInstant()));
                    record.put("leaseUntil", rs.getTimestamp(6) == null ? null : rs.getTimestamp(6).toInstant().toString());
                    record.put("expiresAt", String.valueOf(rs.getTimestamp(7).toInstant()));
                    record.put("attempts", rs.getInt(8));
                    record.put("lastFailure", rs.getString(9));
                    records.add(record);
                }
            }
        }
        return records;
    }

    /**
     * What the table holds.
     *
     * @param counts keys by state
     * @param oldestClaims the oldest live claims first
     * @param mostRecent the most recently recorded keys first
     */
    public record Description(Map<String, Long> counts, List<Map<String, Object>> oldestClaims,
            List<Map<String, Object>> mostRecent) {
    }

    /** @return whether a lease-mode claim's commit skips waiting for its WAL flush */
    public boolean asynchronousClaimCommit() {
        return asynchronousClaimCommit;
    }

    private static IllegalStateException failed(String operation, ScopedKey key, SQLException e) {
        return new IllegalStateException("Could not " + operation + " key '" + key + "': " + e.getMessage(), e);
    }

    // Outside a transaction a connection is in auto-commit: the statement commits on its own in one round trip.
    // Inside one (a caller's), the work must not join it, so it runs in a new transaction.
    private <T> T onItsOwn(Supplier<T> work) {
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
