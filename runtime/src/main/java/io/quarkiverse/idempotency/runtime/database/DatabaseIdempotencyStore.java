package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.function.Supplier;

import javax.sql.DataSource;

import jakarta.transaction.TransactionManager;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * The production store: the {@link IdempotencyRecord} table on PostgreSQL, written with the statements of
 * {@link RecordStatements} through plain JDBC on the persistence unit's datasource (the entity maps the same table for
 * schema generation and reading). Its table is checked and kept up to date by {@link DatabaseSchema}.
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

    /** ON CONFLICT without a unique index matching it: the table was moved to partitions while this ran. */
    private static final String NO_UNIQUE_INDEX = "42P10";

    private final KeyTable table;
    private final boolean joinsTransactions;
    private final boolean asynchronousClaimCommit;
    private final RecordStatements sql;
    private final PartitionPlan plan;
    private final Partitions partitions;
    private final String partitionedClaim;
    private final String partitionedClaimInTransaction;
    private final String partitionedRecordFailure;
    /** Whether the table is partitioned by time, as last read from the database (at startup, and by the health check). */
    private volatile boolean partitioned;

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
        this(dataSource, transactions, table, asynchronousClaimCommit, joinsTransactions, PartitionPlan.NONE);
    }

    /**
     * @param plan the layout of a table the extension creates, and how partitions are cut
     */
    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            boolean asynchronousClaimCommit, boolean joinsTransactions, PartitionPlan plan) {
        this.table = new KeyTable(dataSource, transactions, table);
        this.joinsTransactions = joinsTransactions;
        this.asynchronousClaimCommit = asynchronousClaimCommit;
        this.sql = new RecordStatements(table, asynchronousClaimCommit);
        this.plan = plan;
        this.partitions = new Partitions(this.table, plan.period(), plan.retention());
        this.partitionedClaim = PartitionStatements.claim(table);
        this.partitionedClaimInTransaction = PartitionStatements.claimInTransaction(table);
        this.partitionedRecordFailure = PartitionStatements.recordFailureAfterRollback(table);
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
        String id = StorageKeys.of(key);
        if (partitioned) {
            partitions.cover(retention);
            return table.onItsOwn(() -> table.query(partitionedClaim, ps -> bind(ps, id,
                    StorageKeys.scopeColumn(key.scope()), token, lease.toMillis(), retention.toMillis(),
                    asynchronousClaimCommit), rs -> {
                        rs.next();
                        return claimOf(rs);
                    }, "Could not claim key '" + key + "'"));
        }
        return relayoutOn(() -> table.onItsOwn(() -> table.connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.claim)) {
                bind(ps, id, id, StorageKeys.scopeColumn(key.scope()), token, lease.toMillis(), retention.toMillis(), id);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return claimOf(rs);
                    }
                }
            }
            // A concurrent transaction wrote the key after this statement's snapshot, or holds it: look again.
            try (PreparedStatement state = c.prepareStatement(sql.state)) {
                state.setString(1, id);
                try (ResultSet rs = state.executeQuery()) {
                    return rs.next() ? claimOf(rs) : Claim.BUSY; // no row: an in-transaction delivery holds it
                }
            }
        }, "Could not claim key '" + key + "'")), () -> claim(key, token, lease, retention));
    }

    /**
     * Runs a statement of the unpartitioned table; when it finds the table partitioned since (a migration while this
     * instance runs), reads the layout again and runs the partitioned one instead.
     */
    private <T> T relayoutOn(Supplier<T> unpartitioned, Supplier<T> again) {
        try {
            return unpartitioned.get();
        } catch (IllegalStateException e) {
            if (e.getCause() instanceof SQLException sql && NO_UNIQUE_INDEX.equals(sql.getSQLState())
                    && readLayout()) {
                return again.get();
            }
            throw e;
        }
    }

    /**
     * Reads whether the table is partitioned (a missing table keeps the last answer).
     *
     * @return whether it is
     */
    public boolean readLayout() {
        Boolean layout = table.onItsOwn(() -> table.query(PartitionStatements.layout(),
                ps -> ps.setString(1, table.name()), rs -> rs.next() ? rs.getBoolean(1) : null,
                "Could not read the layout of the idempotency table '" + table.name() + "'"));
        if (layout != null) {
            partitioned = layout;
        }
        return partitioned;
    }

    void layout(boolean partitioned) {
        this.partitioned = partitioned;
    }

    /** @return whether the table is partitioned by time, as last read */
    public boolean partitioned() {
        return partitioned;
    }

    /** @return the table's partitions, when it has them */
    Partitions partitions() {
        return partitions;
    }

    /** @return the layout of a table the extension creates */
    public PartitionPlan plan() {
        return plan;
    }

    // A row of the claim, or of its second look: the answer, the failed attempts, a holder's lease left, a reason.
    private static Claim claimOf(ResultSet rs) throws SQLException {
        ClaimResult result = ClaimResult.valueOf(rs.getString(1));
        int attempts = rs.getInt(2);
        long leaseLeftMillis = rs.getLong(3);
        boolean noLease = rs.wasNull() || leaseLeftMillis <= 0;
        return switch (result) {
            case NEW, TAKEN_OVER -> Claim.claimed(result, attempts);
            case DONE -> Claim.DONE;
            case DEAD_LETTERED -> Claim.deadLettered(attempts, rs.getString(4));
            default -> noLease ? Claim.BUSY : Claim.busyFor(Duration.ofMillis(leaseLeftMillis));
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
     * is the key looked at again: held by another delivery right now (busy), confirmed (a duplicate), dead-lettered, a
     * claim whose lease ran out (expired: taken over on a lease by the caller), or failed: retried here, under the
     * advisory lock this transaction then holds.
     */
    @Override
    public Claim claimInTransaction(ScopedKey key, String token, Duration retention) {
        String id = StorageKeys.of(key);
        boolean partitioned = this.partitioned;
        if (partitioned) {
            partitions.cover(retention);
        }
        return relayoutOn(() -> table.connect(c -> {
            for (int round = 0; round < IN_TRANSACTION_ROUNDS; round++) {
                if (partitioned ? insertedPartitioned(c, id, key, token, retention)
                        : insertedInTransaction(c, id, key, token, retention)) {
                    return Claim.claimed(ClaimResult.NEW, 0);
                }
                try (PreparedStatement look = c.prepareStatement(sql.lookInTransaction)) {
                    bind(look, id, id);
                    try (ResultSet rs = look.executeQuery()) {
                        rs.next();
                        String state = rs.getString(2);
                        if (!rs.getBoolean(1)) {
                            return Claim.BUSY;
                        }
                        if (state == null) {
                            continue; // its holder rolled back since: insert again
                        }
                        switch (state) {
                            case "CONFIRMED":
                                return Claim.DONE;
                            case "DEAD_LETTERED":
                                return Claim.deadLettered(rs.getInt(3), rs.getString(5));
                            case "CLAIMED":
                                return rs.getBoolean(4) ? Claim.EXPIRED : Claim.BUSY; // a lease-mode claim
                            default:
                                break; // failed: retried here
                        }
                    }
                }
                try (PreparedStatement take = c.prepareStatement(sql.takeOverInTransaction)) {
                    bind(take, token, retention.toMillis(), id);
                    try (ResultSet rs = take.executeQuery()) {
                        if (rs.next()) {
                            return Claim.claimed(ClaimResult.NEW, rs.getInt(1)); // a retry of a failed key
                        }
                    }
                }
            }
            return Claim.BUSY;
        }, "Could not claim key '" + key + "'"), () -> {
            // the statement failed, so the handler's transaction is lost: its delivery is retried, now partitioned
            throw new IllegalStateException("The idempotency table '" + table.name() + "' was partitioned while key '"
                    + key + "' was being claimed: retried");
        });
    }

    private boolean insertedInTransaction(Connection c, String id, ScopedKey key, String token,
            Duration retention) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.claimInTransaction)) {
            bind(ps, id, StorageKeys.scopeColumn(key.scope()), token, retention.toMillis(), id);
            return ps.executeUpdate() == 1;
        }
    }

    private boolean insertedPartitioned(Connection c, String id, ScopedKey key, String token,
            Duration retention) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(partitionedClaimInTransaction)) {
            bind(ps, id, StorageKeys.scopeColumn(key.scope()), token, retention.toMillis());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    @Override
    public boolean confirm(ScopedKey key, String token, Duration retention) {
        return table.onItsOwn(() -> confirmInTransaction(key, token, retention));
    }

    @Override
    public boolean confirmInTransaction(ScopedKey key, String token, Duration retention) {
        String id = StorageKeys.of(key);
        if (partitioned) {
            partitions.cover(retention);
        }
        try {
            return table.update(sql.confirm, ps -> bind(ps, retention.toMillis(), id, token),
                    "Could not confirm key '" + key + "'") == 1;
        } catch (IllegalStateException e) {
            throw AbortedTransactions.translate(key, e);
        }
    }

    /** Reads the transaction's state from the driver: no round trip. */
    @Override
    public void checkTransaction(ScopedKey key) {
        if (table.connect(AbortedTransactions::aborted, "Could not read the transaction state of key '" + key + "'")) {
            throw AbortedTransactions.of(key, null);
        }
    }

    @Override
    public boolean releaseDeadLetter(ScopedKey key) {
        String id = StorageKeys.of(key);
        return table.onItsOwn(() -> table.update(sql.releaseDeadLetter, ps -> ps.setString(1, id),
                "Could not release key '" + key + "'")) == 1;
    }

    @Override
    public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        String id = StorageKeys.of(key);
        String reason = failure == null ? null
                : failure.length() <= FAILURE_LENGTH ? failure : failure.substring(0, FAILURE_LENGTH);
        boolean partitioned = this.partitioned;
        if (partitioned) {
            partitions.cover(retention);
        }
        return relayoutOn(() -> table.onItsOwn(() -> table.connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.recordFailureOfClaim)) {
                bind(ps, maxAttempts, reason, retention.toMillis(), id, token);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return rs.getInt(1);
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement(partitioned ? partitionedRecordFailure
                    : sql.recordFailureAfterRollback)) {
                if (partitioned) {
                    bind(ps, id, StorageKeys.scopeColumn(key.scope()), maxAttempts, token, retention.toMillis(), reason);
                } else {
                    bind(ps, id, StorageKeys.scopeColumn(key.scope()), maxAttempts, token, retention.toMillis(), reason,
                            id, maxAttempts);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getInt(1) : 0; // a null count (the function's "none") reads as 0
                }
            }
        }, "Could not count a failed attempt of key '" + key + "'")),
                () -> recordFailure(key, token, failure, maxAttempts, retention));
    }

    @Override
    public boolean release(ScopedKey key, String token) {
        String id = StorageKeys.of(key);
        return table.onItsOwn(() -> table.query(sql.release, ps -> bind(ps, id, token, id, token),
                rs -> rs.next() && rs.getLong(1) > 0, "Could not release key '" + key + "'"));
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
        table.onItsOwn(() -> table.connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.renew)) {
                bind(ps, c.createArrayOf("varchar", ids), c.createArrayOf("varchar", tokens),
                        c.createArrayOf("bigint", leases));
                return ps.executeUpdate();
            }
        }, "Renewing " + ids.length + " claims failed"));
    }

    /**
     * Unpartitioned, deletes up to {@code limit} expired keys. Partitioned, creates the partitions ahead and drops the
     * expired ones whole, whatever the limit: it returns the number of keys they held (counted for partitions of up
     * to 100,000 keys, PostgreSQL's estimate for larger ones), and the next call returns 0.
     */
    @Override
    public int purgeExpired(int limit) {
        if (partitioned) {
            partitions.createAhead();
            return (int) Math.min(Integer.MAX_VALUE, partitions.dropExpired());
        }
        return table.onItsOwn(() -> table.update(sql.purge, ps -> ps.setInt(1, limit), "Purging expired keys failed"));
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        return table.onItsOwn(() -> table.query(sql.oldestClaim, ps -> {
        }, rs -> {
            double seconds = rs.next() ? rs.getDouble(1) : 0;
            return rs.wasNull() ? Optional.<Duration> empty() : Optional.of(Duration.ofMillis((long) (seconds * 1000)));
        }, "Could not read the oldest claim"));
    }

    /**
     * @throws io.quarkiverse.idempotency.runtime.StoreMisconfiguredException when the table is missing or from an
     *         older version, or the database is not PostgreSQL, naming the remedy
     */
    @Override
    public void check() {
        new DatabaseSchema(this).check();
    }

    /** @return the table and its datasource, for the schema's management and for display */
    public KeyTable table() {
        return table;
    }

    /** @return whether a lease-mode claim's commit skips waiting for its WAL flush */
    public boolean asynchronousClaimCommit() {
        return asynchronousClaimCommit;
    }

    // Binds the parameters in order: strings, longs, integers and SQL arrays.
    private static void bind(PreparedStatement ps, Object... values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            Object value = values[i];
            if (value instanceof Long l) {
                ps.setLong(i + 1, l);
            } else if (value instanceof Integer n) {
                ps.setInt(i + 1, n);
            } else if (value instanceof Boolean b) {
                ps.setBoolean(i + 1, b);
            } else if (value instanceof java.sql.Array array) {
                ps.setArray(i + 1, array);
            } else {
                ps.setString(i + 1, (String) value);
            }
        }
    }
}
