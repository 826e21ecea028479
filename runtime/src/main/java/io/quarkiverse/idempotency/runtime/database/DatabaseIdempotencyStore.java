package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import javax.sql.DataSource;

import jakarta.transaction.TransactionManager;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ClaimRequest;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ConfirmRequest;

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
public class DatabaseIdempotencyStore implements IdempotencyStore, SqlKeyStore {

    /** How many times an in-transaction claim looks again when the key's holder ended between two statements. */
    static final int IN_TRANSACTION_ROUNDS = 3;

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
    private final String partitionedClaimBatch;
    /** Lease-mode claims and confirms of concurrent deliveries, each kind sharing statements and commits. */
    private final GroupCommit<ClaimRequest, Claim> claims;
    private final GroupCommit<ConfirmRequest, Boolean> confirms;
    /** The WAL flushes awaited by asynchronously committed deliveries, shared by those waiting at once. */
    private final GroupCommit<Boolean, Boolean> flushes = new GroupCommit<>(this::flush, 4096);
    /** Whether the table is partitioned by time, as last read from the database (at startup, and by the health check). */
    private volatile boolean partitioned;
    private final int leaseBatchSize;

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
        this(dataSource, transactions, table, asynchronousClaimCommit, joinsTransactions, plan, 1);
    }

    /**
     * @param leaseBatchSize the most lease-mode claims (and, apart, confirms) of concurrent deliveries that share one
     *        statement and one commit; 1: each on its own
     */
    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            boolean asynchronousClaimCommit, boolean joinsTransactions, PartitionPlan plan, int leaseBatchSize) {
        this.leaseBatchSize = leaseBatchSize;
        this.table = new KeyTable(dataSource, transactions, table);
        this.joinsTransactions = joinsTransactions;
        this.asynchronousClaimCommit = asynchronousClaimCommit;
        this.sql = new RecordStatements(table, asynchronousClaimCommit);
        this.plan = plan;
        this.partitions = new Partitions(this.table, plan.period(), plan.retention());
        this.partitionedClaim = PartitionStatements.claim(table);
        this.partitionedClaimInTransaction = PartitionStatements.claimInTransaction(table);
        this.partitionedRecordFailure = PartitionStatements.recordFailureAfterRollback(table);
        this.partitionedClaimBatch = PartitionStatements.claimBatch(table);
        this.claims = leaseBatchSize > 1 ? new GroupCommit<>(this::claimAll, leaseBatchSize) : null;
        this.confirms = leaseBatchSize > 1 ? new GroupCommit<>(this::confirmAll, leaseBatchSize) : null;
    }

    /** @return the statements of the unpartitioned table, for {@link SessionKeys} */
    @Override
    public RecordStatements statements() {
        return sql;
    }

    /**
     * @return why keys cannot be written in a Hibernate Reactive handler's transaction ({@link SessionKeys}), or
     *         {@code null} when they can
     */
    @Override
    public String sessionRefusal() {
        return partitioned ? "its idempotency table '" + table.name() + "' is partitioned by time, which keys written"
                + " by a reactive session do not support yet" : null;
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
        return claim(key, token, lease, retention, MessageFacts.NONE);
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        if (claims != null) {
            if (partitioned) {
                partitions.cover(retention);
            }
            return claims.submit(new ClaimRequest(key, token, lease, retention, facts));
        }
        return claimAlone(key, token, lease, retention, facts);
    }

    private Claim claimAlone(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        String id = StorageKeys.of(key);
        if (partitioned) {
            partitions.cover(retention);
            return table.onItsOwn(() -> table.query(partitionedClaim, ps -> bind(ps, id,
                    StorageKeys.scopeColumn(key.scope()), token, lease.toMillis(), retention.toMillis(),
                    facts.messageId(), facts.fingerprint(), asynchronousClaimCommit), rs -> {
                        rs.next();
                        return claimOf(rs);
                    }, "Could not claim key '" + key + "'"));
        }
        return relayoutOn(() -> table.onItsOwn(() -> table.connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.claim)) {
                bind(ps, id, id, StorageKeys.scopeColumn(key.scope()), token, lease.toMillis(), retention.toMillis(),
                        facts.messageId(), facts.fingerprint(), id);
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
        }, "Could not claim key '" + key + "'")), () -> claimAlone(key, token, lease, retention, facts));
    }

    /** Claims a batch of keys in one statement and one commit (see {@link LeaseBatches.Claims#answers}). */
    private List<Claim> claimAll(List<ClaimRequest> batch) {
        if (batch.size() == 1) {
            ClaimRequest only = batch.get(0);
            return List.of(claimAlone(only.key(), only.token(), only.lease(), only.retention(), only.facts()));
        }
        LeaseBatches.Claims claims = new LeaseBatches.Claims(batch);
        RuntimeException[] failures = new RuntimeException[claims.size()];
        Claim[] answers = relayoutOn(() -> claimDistinct(claims, failures), () -> claimDistinct(claims, failures));
        return claims.answers(answers, failures);
    }

    private Claim[] claimDistinct(LeaseBatches.Claims claims, RuntimeException[] failures) {
        return table.onItsOwn(() -> table.connect(c -> claimDistinct(c, claims, failures),
                "Could not claim " + claims.describe()));
    }

    // The batch's statement commits on its own; a key it could not claim is looked at again, and a look-up that fails
    // fails that key's request only (failures), not the keys the statement claimed.
    private Claim[] claimDistinct(Connection c, LeaseBatches.Claims claims, RuntimeException[] failures)
            throws SQLException {
        int n = claims.size();
        String[] ids = claims.ids;
        Claim[] answers = new Claim[n];
        boolean partitioned = this.partitioned;
        try (PreparedStatement ps = c.prepareStatement(partitioned ? partitionedClaimBatch : sql.claimBatch)) {
            bind(ps, c.createArrayOf("varchar", ids), c.createArrayOf("varchar", claims.scopes),
                    c.createArrayOf("varchar", claims.tokens), c.createArrayOf("bigint", claims.leases),
                    c.createArrayOf("bigint", claims.retentions), c.createArrayOf("varchar", claims.messageIds),
                    c.createArrayOf("varchar", claims.fingerprints));
            if (partitioned) {
                ps.setBoolean(8, asynchronousClaimCommit);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int position = rs.getInt(1) - 1;
                    answers[position] = rs.getString(2) == null ? null : claimOf(rs, 1);
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (answers[i] == null) {
                // written after the statement's snapshot, or held: look again, as a lone claim does
                try (PreparedStatement state = c.prepareStatement(sql.state)) {
                    state.setString(1, ids[i]);
                    try (ResultSet rs = state.executeQuery()) {
                        answers[i] = rs.next() ? claimOf(rs, 0) : Claim.BUSY;
                    }
                } catch (SQLException e) {
                    failures[i] = new IllegalStateException("Could not claim key '" + claims.keyOf(i) + "': "
                            + e.getMessage(), e);
                }
            }
        }
        return answers;
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

    // A row of the claim, or of its second look: the answer, the failed attempts, a holder's lease left, a reason, and
    // the message facts and age of a key it did not take.
    private static Claim claimOf(ResultSet rs) throws SQLException {
        return claimOf(rs, 0);
    }

    // The same, from the columns after the first {@code skip} ones.
    private static Claim claimOf(ResultSet rs, int skip) throws SQLException {
        ClaimResult result = ClaimResult.valueOf(rs.getString(skip + 1));
        int attempts = rs.getInt(skip + 2);
        long leaseLeftMillis = rs.getLong(skip + 3);
        boolean noLease = rs.wasNull() || leaseLeftMillis <= 0;
        return switch (result) {
            case NEW, TAKEN_OVER -> Claim.claimed(result, attempts);
            case DONE -> done(rs, skip + 5);
            case DEAD_LETTERED -> Claim.deadLettered(attempts, rs.getString(skip + 4));
            default -> noLease ? Claim.BUSY : Claim.busyFor(Duration.ofMillis(leaseLeftMillis));
        };
    }

    @Override
    public Claim peek(ScopedKey key) {
        String id = StorageKeys.of(key);
        return table.onItsOwn(() -> table.query(sql.peek, ps -> ps.setString(1, id), rs -> {
            if (!rs.next() || rs.getString(1) == null) {
                return Claim.claimed(ClaimResult.NEW, 0);
            }
            return switch (rs.getString(1)) {
                case "LOCKED" -> Claim.BUSY; // written in a transaction not committed yet
                case "CONFIRMED" -> done(rs, 5);
                case "DEAD_LETTERED" -> Claim.deadLettered(rs.getInt(2), rs.getString(4));
                case "CLAIMED" -> rs.getBoolean(3) ? Claim.BUSY : Claim.claimed(ClaimResult.NEW, rs.getInt(2));
                default -> Claim.claimed(ClaimResult.NEW, rs.getInt(2));
            };
            // never named: in its other form, the key may be the readable one that digest keys keep out of the logs
        }, "Could not look up a key in its other form"));
    }

    @Override
    public boolean peeks() {
        return true;
    }

    // A confirmed key, from its message id, fingerprint and age in milliseconds, at column {@code first} on.
    static Claim done(ResultSet rs, int first) throws SQLException {
        String messageId = rs.getString(first);
        String fingerprint = rs.getString(first + 1);
        long age = rs.getLong(first + 2);
        return Claim.done(MessageFacts.of(messageId, fingerprint), rs.wasNull() ? null : Duration.ofMillis(age));
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
        return claimInTransaction(key, token, retention, false);
    }

    /**
     * With {@code asynchronousCommit}, the insert of a new key sets its transaction to commit asynchronously in the same
     * statement (on a partitioned table, and for the retry of a failed key, one statement more).
     */
    @Override
    public Claim claimInTransaction(ScopedKey key, String token, Duration retention, boolean asynchronousCommit) {
        return claimInTransaction(key, token, retention, asynchronousCommit, MessageFacts.NONE);
    }

    @Override
    public Claim claimInTransaction(ScopedKey key, String token, Duration retention, boolean asynchronousCommit,
            MessageFacts facts) {
        String id = StorageKeys.of(key);
        boolean partitioned = this.partitioned;
        if (partitioned) {
            partitions.cover(retention);
        }
        return relayoutOn(() -> table.connect(c -> {
            for (int round = 0; round < IN_TRANSACTION_ROUNDS; round++) {
                if (partitioned ? insertedPartitioned(c, id, key, token, retention, facts)
                        : insertedInTransaction(c, id, key, token, retention, asynchronousCommit, facts)) {
                    if (partitioned && asynchronousCommit) {
                        commitAsynchronously(c);
                    }
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
                                return done(rs, 6);
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
                    bind(take, token, retention.toMillis(), facts.messageId(), facts.fingerprint(), id);
                    try (ResultSet rs = take.executeQuery()) {
                        if (rs.next()) {
                            if (asynchronousCommit) {
                                commitAsynchronously(c);
                            }
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
            Duration retention, boolean asynchronousCommit, MessageFacts facts) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(asynchronousCommit ? sql.claimInTransactionAsynchronously
                : sql.claimInTransaction)) {
            bind(ps, id, StorageKeys.scopeColumn(key.scope()), token, retention.toMillis(), facts.messageId(),
                    facts.fingerprint(), id);
            return ps.executeUpdate() == 1;
        }
    }

    private boolean insertedPartitioned(Connection c, String id, ScopedKey key, String token,
            Duration retention, MessageFacts facts) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(partitionedClaimInTransaction)) {
            bind(ps, id, StorageKeys.scopeColumn(key.scope()), token, retention.toMillis(), facts.messageId(),
                    facts.fingerprint());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    @Override
    public boolean commitsAsynchronously() {
        return true;
    }

    private static void commitAsynchronously(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(RecordStatements.ASYNCHRONOUS_COMMIT)) {
            ps.executeQuery().close();
        }
    }

    /**
     * One transaction with a synchronous commit, for every caller waiting at once: its commit returns once the WAL is
     * flushed up to its own record, so past the commit of each caller (which returned before the caller asked).
     */
    @Override
    public void awaitDurable() {
        flushes.submit(Boolean.TRUE);
    }

    private List<Boolean> flush(List<Boolean> batch) {
        table.transaction(c -> {
            try (PreparedStatement ps = c.prepareStatement(RecordStatements.FLUSH)) {
                ps.executeQuery().close();
            }
            return null;
        }, "Could not flush the WAL");
        return java.util.Collections.nCopies(batch.size(), Boolean.TRUE);
    }

    /** @return how many WAL flushes ran for asynchronously committed deliveries, and how many deliveries they served */
    public long[] flushStatistics() {
        return flushes.statistics();
    }

    @Override
    public boolean confirm(ScopedKey key, String token, Duration retention) {
        if (confirms != null) {
            if (partitioned) {
                partitions.cover(retention);
            }
            return confirms.submit(new ConfirmRequest(key, token, retention));
        }
        return table.onItsOwn(() -> confirmInTransaction(key, token, retention));
    }

    /** Confirms a batch of claims in one statement and one commit. */
    private List<Boolean> confirmAll(List<ConfirmRequest> batch) {
        if (batch.size() == 1) {
            ConfirmRequest only = batch.get(0);
            return List.of(table.onItsOwn(() -> confirmInTransaction(only.key(), only.token(), only.retention())));
        }
        LeaseBatches.Confirms confirms = new LeaseBatches.Confirms(batch);
        Set<String> confirmed = table.onItsOwn(() -> table.connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.confirmBatch)) {
                bind(ps, c.createArrayOf("varchar", confirms.ids), c.createArrayOf("varchar", confirms.tokens),
                        c.createArrayOf("bigint", confirms.retentions));
                Set<String> claims = new HashSet<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        claims.add(LeaseBatches.Confirms.confirmed(rs.getString(1), rs.getString(2)));
                    }
                }
                return claims;
            }
        }, "Could not confirm " + confirms.describe()));
        return confirms.answers(confirmed);
    }

    /**
     * @return how many batches of lease-mode claims, then of confirms, ran and how many requests they held (four
     *         counts), since the start; zeros when each commits on its own
     */
    public long[] leaseBatchStatistics() {
        long[] claimed = claims == null ? new long[2] : claims.statistics();
        long[] confirmed = confirms == null ? new long[2] : confirms.statistics();
        return new long[] { claimed[0], claimed[1], confirmed[0], confirmed[1] };
    }

    @Override
    public int leaseBatchSize() {
        return leaseBatchSize;
    }

    /** @return how many lease-mode claims, then confirms, wait for their batch now */
    public int[] leaseBatchesWaiting() {
        return new int[] { claims == null ? 0 : claims.waiting(), confirms == null ? 0 : confirms.waiting() };
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
    public int endLeasesOfEarlierStarts(String instance, String current) {
        return table.onItsOwn(() -> table.update(sql.endLeasesOfEarlierStarts, ps -> {
            ps.setString(1, instance);
            ps.setString(2, current);
        }, "Could not end the leases of the claims of earlier starts of '" + instance + "'"));
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
        String reason = RecordStatements.reason(failure);
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
        LeaseBatches.Renewals renewals = new LeaseBatches.Renewals(claims);
        String[] ids = renewals.ids;
        table.onItsOwn(() -> table.connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.renew)) {
                bind(ps, c.createArrayOf("varchar", ids), c.createArrayOf("varchar", renewals.tokens),
                        c.createArrayOf("bigint", renewals.leases));
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
