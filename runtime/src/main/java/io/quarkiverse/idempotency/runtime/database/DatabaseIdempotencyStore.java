package io.quarkiverse.idempotency.runtime.database;

import static io.quarkiverse.idempotency.runtime.database.SqlCalls.SqlArray.bigint;
import static io.quarkiverse.idempotency.runtime.database.SqlCalls.SqlArray.varchar;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

import javax.sql.DataSource;

import jakarta.transaction.TransactionManager;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.SynchronousStore;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ClaimRequest;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ConfirmRequest;
import io.smallrye.mutiny.Uni;

/**
 * The production store: the {@link IdempotencyRecord} table on PostgreSQL, written with the protocol of
 * {@link KeyProtocol} through plain JDBC on the persistence unit's datasource (the entity maps the same table for
 * schema generation and reading). Its table is checked and kept up to date by {@link DatabaseSchema}.
 * <p>
 * Lease-mode statements commit on their own: outside a transaction (the usual case) each is one round trip in
 * auto-commit; inside a caller's transaction it runs in a new transaction of its own, so that it never joins (nor
 * waits for) the caller's. In-transaction claims and confirms join the caller's transaction: the datasource hands out
 * the connection enlisted in it.
 */
public class DatabaseIdempotencyStore implements SqlKeyStore, SynchronousStore {

    /** ON CONFLICT without a unique index matching it: the table was moved to partitions while this ran. */
    private static final String NO_UNIQUE_INDEX = "42P10";

    private final KeyTable table;
    private final boolean joinsTransactions;
    private final boolean asynchronousClaimCommit;
    private final KeyProtocol protocol;
    private final RecordStatements sql;
    private final PartitionPlan plan;
    private final Partitions partitions;
    /** Lease-mode claims and confirms of concurrent deliveries, each kind sharing statements and commits. */
    private final GroupCommit<ClaimRequest, Claim> claims;
    private final GroupCommit<ConfirmRequest, Boolean> confirms;
    /** The WAL flushes awaited by asynchronously committed deliveries, shared by those waiting at once. */
    private final WalFlushes flushes;
    /** Whether the table is partitioned by time, as last read from the database (at startup, and by the health check). */
    private volatile boolean partitioned;
    private final int leaseBatchSize;

    /**
     * @param asynchronousClaimCommit whether a lease-mode claim's commit skips waiting for its WAL flush (see
     *        {@code quarkus.idempotency.database.asynchronous-claim-commit})
     */
    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            boolean asynchronousClaimCommit) {
        this(dataSource, transactions, table, asynchronousClaimCommit, true, PartitionPlan.NONE, 1);
    }

    /**
     * @param joinsTransactions whether handlers' transactions are on this datasource, so that keys can be written in
     *        them (see {@link #joinsTransactions()})
     * @param plan the layout of a table the extension creates, and how partitions are cut
     * @param leaseBatchSize the most lease-mode claims (and, apart, confirms) of concurrent deliveries that share one
     *        statement and one commit; 1: each on its own
     */
    public DatabaseIdempotencyStore(DataSource dataSource, TransactionManager transactions, String table,
            boolean asynchronousClaimCommit, boolean joinsTransactions, PartitionPlan plan, int leaseBatchSize) {
        this.leaseBatchSize = leaseBatchSize;
        this.table = new KeyTable(dataSource, transactions, table);
        this.joinsTransactions = joinsTransactions;
        this.asynchronousClaimCommit = asynchronousClaimCommit;
        this.protocol = new KeyProtocol(table, asynchronousClaimCommit);
        this.sql = protocol.statements();
        this.flushes = new WalFlushes(this.table, protocol);
        this.plan = plan;
        this.partitions = new Partitions(this.table.sessions(), table, plan.period(), plan.retention());
        this.claims = leaseBatchSize > 1 ? new GroupCommit<>(this::claimAll, leaseBatchSize) : null;
        this.confirms = leaseBatchSize > 1 ? new GroupCommit<>(this::confirmAll, leaseBatchSize) : null;
    }

    /** @return the table's protocol, for {@link SessionKeys} */
    @Override
    public KeyProtocol protocol() {
        return protocol;
    }

    /**
     * Runs an operation of the protocol on a connection of the datasource (the one enlisted in the caller's
     * transaction, if any), answered before it returns.
     *
     * @param failure what failed, for the exception's message: built only if it fails (a key's text is not built for
     *        every message)
     */
    private <T> T run(Function<SqlCalls, Uni<T>> operation, Supplier<String> failure) {
        return table.connect(c -> JdbcCalls.answered(c, operation), failure);
    }

    @Override
    public String tableName() {
        return table.name();
    }

    @Override
    public <T> Uni<T> onTable(Function<SqlCalls, Uni<T>> operation) {
        return Uni.createFrom().item(() -> runOnItsOwn(operation, () -> "Could not use the idempotency table '" + table.name()
                + "'"));
    }

    /** {@link #run}, committed on its own. */
    private <T> T runOnItsOwn(Function<SqlCalls, Uni<T>> operation, Supplier<String> failure) {
        return table.onItsOwn(() -> run(operation, failure));
    }

    /**
     * Readies the table for a key written through a reactive session or pool ({@link SessionKeys}, {@link PoolKeys}):
     * partitioned, a partition must hold the key's expiry, as before every write over JDBC; found in memory but when
     * partitions are to be created (the first write, a longer retention, no purge for a period), which is done over
     * JDBC on a worker thread, and the caller's Vert.x context resumed after (a Hibernate Reactive session is bound to
     * it).
     */
    @Override
    public Uni<Boolean> readyToWrite(Duration retention) {
        boolean partitioned = this.partitioned;
        if (!partitioned || partitions.covers(retention)) {
            return Uni.createFrom().item(partitioned);
        }
        return offEventLoop(() -> {
            cover(retention);
            return true;
        });
    }

    /** Reads the layout again, off the event loop (see {@link SqlKeyStore#layoutChanged}). */
    @Override
    public Uni<Boolean> layoutChanged() {
        return offEventLoop(this::readLayout);
    }

    /**
     * Runs a JDBC call for a reactive caller: on a worker thread when called on an event loop, its context resumed
     * after (a Hibernate Reactive session is bound to it); in place on any other thread.
     */
    private static <T> Uni<T> offEventLoop(Supplier<T> call) {
        if (!io.vertx.core.Context.isOnEventLoopThread()) {
            return Uni.createFrom().item(call);
        }
        io.vertx.core.Context context = io.vertx.core.Vertx.currentContext();
        return Uni.createFrom().completionStage(() -> context.executeBlocking(call::get, false).toCompletionStage());
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
        return claim(key, token, lease, retention, MessageFacts.NONE);
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        ClaimRequest request = new ClaimRequest(key, token, lease, retention, facts);
        if (claims != null) {
            if (partitioned) {
                cover(retention);
            }
            return claims.submit(request);
        }
        return claimAlone(request);
    }

    private Claim claimAlone(ClaimRequest request) {
        boolean partitioned = this.partitioned;
        if (partitioned) {
            cover(request.retention());
        }
        Supplier<Claim> claim = () -> runOnItsOwn(db -> protocol.claim(db, request, partitioned),
                () -> "Could not claim key '" + request.key() + "'");
        return partitioned ? claim.get() : relayoutOn(claim, () -> claimAlone(request));
    }

    /** Claims a batch of keys in one statement and one commit (see {@link LeaseBatches.Claims#answers}). */
    private List<Claim> claimAll(List<ClaimRequest> batch) {
        if (batch.size() == 1) {
            return List.of(claimAlone(batch.get(0)));
        }
        LeaseBatches.Claims claims = new LeaseBatches.Claims(batch);
        RuntimeException[] failures = new RuntimeException[claims.size()];
        Supplier<Claim[]> claim = () -> {
            boolean partitioned = this.partitioned;
            return runOnItsOwn(db -> protocol.claimBatch(db, claims, failures, partitioned),
                    () -> "Could not claim " + claims.describe());
        };
        return claims.answers(relayoutOn(claim, claim), failures);
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

    /**
     * Makes sure a partition holds a key written now with this retention ({@link Partitions#cover}), on this thread:
     * over JDBC, answered before it returns, or once another thread creating partitions has; once more if that one
     * did not reach this retention.
     */
    private void cover(Duration retention) {
        for (int round = 0; round < 2 && !partitions.covers(retention); round++) {
            try {
                // not Mutiny's await: a JDBC call on an event loop (a defect KeyTable warns about) waits as every other
                partitions.cover(retention).subscribeAsCompletionStage().join();
            } catch (java.util.concurrent.CompletionException e) {
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw e.getCause() instanceof RuntimeException cause ? cause : e;
            }
        }
    }

    void layout(boolean partitioned) {
        this.partitioned = partitioned;
    }

    @Override
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

    @Override
    public Claim peek(ScopedKey key) {
        // never named: in its other form, the key may be the readable one that digest keys keep out of the logs
        return runOnItsOwn(db -> protocol.peek(db, key), () -> "Could not look up a key in its other form");
    }

    @Override
    public boolean peeks() {
        return true;
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
        boolean partitioned = this.partitioned;
        if (partitioned) {
            cover(retention);
        }
        KeyProtocol.Write write = new KeyProtocol.Write(key, token, retention, facts);
        return relayoutOn(() -> run(db -> protocol.claimInTransaction(db, write, asynchronousCommit, partitioned),
                () -> "Could not claim key '" + key + "'"), () -> {
                    // the statement failed, so the handler's transaction is lost: its delivery is retried, now
                    // partitioned
                    throw new IllegalStateException("The idempotency table '" + table.name() + "' was partitioned while"
                            + " key '" + key + "' was being claimed: retried");
                });
    }

    @Override
    public boolean commitsAsynchronously() {
        return true;
    }

    /** One flush for every caller waiting at once ({@link WalFlushes}). */
    @Override
    public void awaitDurable() {
        flushes.await();
    }

    /** {@link #awaitDurable()}, reading in the flush's own statement whether a form of the key is confirmed. */
    @Override
    public boolean awaitConfirmedDurably(List<ScopedKey> forms) {
        List<String> ids = new ArrayList<>(forms.size());
        for (ScopedKey form : forms) {
            ids.add(StorageKeys.of(form));
        }
        return flushes.awaitConfirmed(ids);
    }

    /** @return how many WAL flushes ran for asynchronously committed deliveries, and how many deliveries they served */
    public long[] flushStatistics() {
        return flushes.statistics();
    }

    @Override
    public boolean confirm(ScopedKey key, String token, Duration retention) {
        if (confirms != null) {
            if (partitioned) {
                cover(retention);
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
        return runOnItsOwn(db -> protocol.confirmBatch(db, confirms), () -> "Could not confirm " + confirms.describe());
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
        if (partitioned) {
            cover(retention);
        }
        return run(db -> protocol.confirmInTransaction(db, key, token, retention), () -> "Could not confirm key '" + key + "'");
    }

    /** Reads the transaction's state from the driver: no round trip. */
    @Override
    public void checkTransaction(ScopedKey key) {
        if (table.connect(AbortedTransactions::aborted, () -> "Could not read the transaction state of key '" + key + "'")) {
            throw AbortedTransactions.of(key, null);
        }
    }

    @Override
    public int endLeasesOfEarlierStarts(String instance, String current) {
        return runOnItsOwn(db -> db.update(sql.endLeasesOfEarlierStarts, instance, current),
                () -> "Could not end the leases of the claims of earlier starts of '" + instance + "'");
    }

    @Override
    public boolean releaseDeadLetter(ScopedKey key) {
        return runOnItsOwn(db -> db.update(sql.releaseDeadLetter, StorageKeys.of(key)),
                () -> "Could not release key '" + key + "'") == 1;
    }

    @Override
    public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        boolean partitioned = this.partitioned;
        if (partitioned) {
            cover(retention);
        }
        return relayoutOn(() -> runOnItsOwn(db -> protocol.recordFailure(db, key, token, failure, maxAttempts,
                retention, partitioned), () -> "Could not count a failed attempt of key '" + key + "'"),
                () -> recordFailure(key, token, failure, maxAttempts, retention));
    }

    @Override
    public boolean release(ScopedKey key, String token) {
        return runOnItsOwn(db -> protocol.release(db, key, token), () -> "Could not release key '" + key + "'");
    }

    @Override
    public void renew(Collection<HeldClaim> claims) {
        if (claims.isEmpty()) {
            return;
        }
        LeaseBatches.Renewals renewals = new LeaseBatches.Renewals(claims);
        runOnItsOwn(db -> db.update(sql.renew, varchar(renewals.ids), varchar(renewals.tokens),
                bigint(renewals.leases)), () -> "Renewing " + renewals.ids.length + " claims failed");
    }

    /**
     * Unpartitioned, deletes up to {@code limit} expired keys. Partitioned, creates the partitions ahead and drops the
     * expired ones whole, whatever the limit: it returns the number of keys they held (counted for partitions of up
     * to 100,000 keys, PostgreSQL's estimate for larger ones), and the next call returns 0.
     */
    @Override
    public int purgeExpired(int limit) {
        if (partitioned) {
            partitions.createAhead().await().indefinitely();
            return (int) Math.min(Integer.MAX_VALUE, partitions.dropExpired().await().indefinitely());
        }
        return runOnItsOwn(db -> db.update(sql.purge, limit), () -> "Purging expired keys failed");
    }

    @Override
    public Optional<Duration> untilPartitionEnd() {
        return partitioned ? partitions.untilNextEnd() : Optional.empty();
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        Double seconds = runOnItsOwn(db -> db.query(sql.oldestClaim).map(rows -> rows.get(0).fraction(0)),
                () -> "Could not read the oldest claim");
        return seconds == null ? Optional.empty() : Optional.of(Duration.ofMillis((long) (seconds * 1000)));
    }

    /**
     * @throws io.quarkiverse.idempotency.runtime.StoreMisconfiguredException when the table is missing or from an
     *         older version, or the database is not PostgreSQL, naming the remedy
     */
    @Override
    public void check() {
        partitioned = JdbcTableChecks.check(table);
    }

    /** @return the table and its datasource, for the schema's management and for display */
    public KeyTable table() {
        return table;
    }

    /** @return whether a lease-mode claim's commit skips waiting for its WAL flush */
    public boolean asynchronousClaimCommit() {
        return asynchronousClaimCommit;
    }
}
