package io.quarkiverse.idempotency.runtime.database;

import static io.quarkiverse.idempotency.runtime.database.SqlCalls.SqlArray.bigint;
import static io.quarkiverse.idempotency.runtime.database.SqlCalls.SqlArray.varchar;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * The database store of an application that has only the reactive PostgreSQL client (Hibernate Reactive, no JDBC
 * datasource): the same table and statements as {@link DatabaseIdempotencyStore}, sent through the client's pool. The
 * lease-mode calls of methods on the event loop go through {@link #keys()} without blocking; the calls of this
 * interface, which callers make from worker threads (a {@code @Blocking} method, the purge job, the health check, the
 * lease renewal), wait for the pool's answer. Keys are written in {@code @WithTransaction} handlers' transactions
 * through their sessions ({@link SessionKeys}). A table partitioned by time has its partitions created and dropped
 * through the pool too ({@link Partitions} over {@link PoolSessions}): a write that needs a partition not made yet
 * waits for it without blocking its event loop.
 */
public class PoolIdempotencyStore implements SqlKeyStore {

    /** How long a blocking caller waits for the pool's answer before the call fails as a store failure. */
    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(60);

    private final Pool pool;
    private final PoolCalls calls;
    private final String table;
    private final KeyProtocol protocol;
    private final RecordStatements sql;
    private final int leaseBatchSize;
    private final PoolKeys keys;
    private final PartitionPlan plan;
    private final Partitions partitions;
    /** Whether the table is partitioned by time, as last read (at startup, and when a write found it moved). */
    private volatile boolean partitioned;

    /**
     * @param leaseBatchSize the most lease-mode claims (and, apart, confirms) of concurrent deliveries that share one
     *        statement and one commit; 1: each on its own
     */
    public PoolIdempotencyStore(Pool pool, String table, int leaseBatchSize) {
        this(pool, table, leaseBatchSize, false);
    }

    /**
     * @param asynchronousClaimCommit whether lease-mode claims commit without waiting for their WAL flush
     *        ({@code quarkus.idempotency.database.asynchronous-claim-commit})
     */
    public PoolIdempotencyStore(Pool pool, String table, int leaseBatchSize, boolean asynchronousClaimCommit) {
        this(pool, table, leaseBatchSize, asynchronousClaimCommit, PartitionPlan.NONE);
    }

    /** @param plan the layout of a table the extension creates, and how partitions are cut */
    public PoolIdempotencyStore(Pool pool, String table, int leaseBatchSize, boolean asynchronousClaimCommit,
            PartitionPlan plan) {
        this.pool = pool;
        this.plan = plan;
        this.partitions = new Partitions(new PoolSessions(pool), table, plan.period(), plan.retention());
        this.table = table;
        this.protocol = new KeyProtocol(table, asynchronousClaimCommit);
        this.sql = protocol.statements();
        this.leaseBatchSize = leaseBatchSize;
        this.calls = new PoolCalls(pool);
        this.keys = new PoolKeys(this, pool);
    }

    /** @return the store's calls without blocking, for methods on the event loop */
    public PoolKeys keys() {
        return keys;
    }

    /** @return the pool the store's statements go through */
    public Pool pool() {
        return pool;
    }

    @Override
    public String tableName() {
        return table;
    }

    @Override
    public <T> Uni<T> onTable(Function<SqlCalls, Uni<T>> operation) {
        return operation.apply(calls);
    }

    @Override
    public KeyProtocol protocol() {
        return protocol;
    }

    /**
     * Partitioned, a partition must hold the key's expiry: found in memory, else created through the pool (or the
     * creation under way joined), and the caller's Vert.x context resumed after (a Hibernate Reactive session is bound
     * to it).
     */
    @Override
    public Uni<Boolean> readyToWrite(Duration retention) {
        boolean partitioned = this.partitioned;
        if (!partitioned || partitions.covers(retention)) {
            return Uni.createFrom().item(partitioned);
        }
        Context context = Vertx.currentContext();
        // once more if the creation it joined did not reach this retention
        Uni<Boolean> covered = partitions.cover(retention).chain(() -> partitions.cover(retention)).replaceWith(true);
        return context == null ? covered : covered.emitOn(task -> context.runOnContext(ignored -> task.run()));
    }

    /** Reads the layout again, through the pool (see {@link SqlKeyStore#layoutChanged}). */
    @Override
    public Uni<Boolean> layoutChanged() {
        return TableChecks.partitioned(calls, table).map(layout -> {
            partitioned = Boolean.TRUE.equals(layout);
            return partitioned;
        });
    }

    @Override
    public boolean partitioned() {
        return partitioned;
    }

    /** @return the layout of a table the extension creates */
    PartitionPlan plan() {
        return plan;
    }

    /** @return the table's partitions, when it has them */
    Partitions partitions() {
        return partitions;
    }

    /**
     * Reads whether the table is partitioned by time, and remembers it for the writes.
     *
     * @return whether it is; {@code null} when there is no table
     */
    Boolean readLayout() {
        Boolean layout = await(TableChecks.partitioned(calls, table), "read the layout of the idempotency table '"
                + table + "'");
        partitioned = Boolean.TRUE.equals(layout);
        return layout;
    }

    @Override
    public Optional<Duration> untilPartitionEnd() {
        return partitioned ? partitions.untilNextEnd() : Optional.empty();
    }

    @Override
    public int leaseBatchSize() {
        return leaseBatchSize;
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
        return claim(key, token, lease, retention, MessageFacts.NONE);
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        return await(keys.claim(key, token, lease, retention, facts), "claim key '" + key + "'");
    }

    @Override
    public boolean confirm(ScopedKey key, String token, Duration retention) {
        return await(keys.confirm(key, token, retention), "confirm key '" + key + "'");
    }

    @Override
    public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        return await(keys.recordFailure(key, token, failure, maxAttempts, retention),
                "count a failed attempt of key '" + key + "'");
    }

    @Override
    public boolean release(ScopedKey key, String token) {
        return await(keys.release(key, token), "release key '" + key + "'");
    }

    @Override
    public Claim peek(ScopedKey key) {
        // never named: in its other form, the key may be the readable one that digest keys keep out of the logs
        return await(keys.peek(key), "look up a key in its other form");
    }

    @Override
    public boolean peeks() {
        return true;
    }

    @Override
    public void renew(Collection<HeldClaim> claims) {
        if (claims.isEmpty()) {
            return;
        }
        LeaseBatches.Renewals renewals = new LeaseBatches.Renewals(claims);
        await(calls.update(sql.renew, varchar(renewals.ids), varchar(renewals.tokens), bigint(renewals.leases)),
                "renew " + renewals.ids.length + " claims");
    }

    @Override
    public int endLeasesOfEarlierStarts(String instance, String current) {
        return await(calls.update(sql.endLeasesOfEarlierStarts, instance, current),
                "end the leases of the claims of earlier starts of '" + instance + "'");
    }

    @Override
    public boolean releaseDeadLetter(ScopedKey key) {
        return await(calls.update(sql.releaseDeadLetter, StorageKeys.of(key)), "release key '" + key + "'") == 1;
    }

    /**
     * Unpartitioned, deletes up to {@code limit} expired keys. Partitioned, creates the partitions ahead and drops the
     * expired ones whole, whatever the limit (see {@link DatabaseIdempotencyStore#purgeExpired}).
     */
    @Override
    public int purgeExpired(int limit) {
        if (partitioned) {
            long dropped = await(partitions.createAhead().chain(partitions::dropExpired), "purge expired partitions");
            return (int) Math.min(Integer.MAX_VALUE, dropped);
        }
        return await(calls.update(sql.purge, limit), "purge expired keys");
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        Double seconds = await(calls.query(sql.oldestClaim), "read the oldest claim").get(0).fraction(0);
        return seconds == null ? Optional.empty() : Optional.of(Duration.ofMillis((long) (seconds * 1000)));
    }

    /**
     * @throws StoreMisconfiguredException when the table is missing or lacks columns of this version, or the connections
     *         commit asynchronously by default, naming the remedy
     */
    @Override
    public void check() {
        String asynchronous = await(TableChecks.asynchronousByDefault(calls), "read the commits' durability");
        if (asynchronous != null) {
            throw new StoreMisconfiguredException(asynchronous, null);
        }
        Boolean layout = readLayout();
        if (layout == null) {
            throw new StoreMisconfiguredException("The idempotency table '" + table + "' does not exist. Let the"
                    + " extension create it at startup (quarkus.idempotency.database.schema-management=update, the"
                    + " default in dev and test mode), or create it with your migrations: "
                    + String.join("; ", TableStatements.schema(table)), null);
        }
        List<String> missing = missingColumns();
        List<String> remedy = new ArrayList<>(layout ? PartitionStatements.schema(table) : TableStatements.schema(table));
        if (layout) {
            // written only by the functions, under READ COMMITTED: refused here rather than failing every write
            String against = await(TableChecks.againstPartitions(calls, table), "read the server's version");
            if (against != null) {
                throw new StoreMisconfiguredException("The idempotency table '" + table + "' is partitioned by time,"
                        + " which this database cannot serve: " + against + ". Use an unpartitioned table", null);
            }
            if (!functionsPresent()) {
                missing.add("the functions " + String.join(", ", PartitionStatements.functionNames(table))
                        + " that write keys into its partitions");
            }
        }
        TableChecks.validateStateChecks(stateChecks(), "the reactive client's database", table, missing, remedy);
        if (!missing.isEmpty()) {
            throw new StoreMisconfiguredException(TableChecks.olderVersion(table, missing, remedy,
                    "quarkus.idempotency.database.schema-management=update does it at startup"), null);
        }
    }

    /** @return the columns this version needs that the table lacks (all of them when there is no table) */
    List<String> missingColumns() {
        return await(TableChecks.missingColumns(calls, table), "read the columns of the idempotency table '" + table
                + "'");
    }

    /** @return whether the functions a partitioned table's keys are written with are there, in this version */
    boolean functionsPresent() {
        return await(TableChecks.functionsPresent(calls, table), "read the functions of the idempotency table '" + table
                + "'");
    }

    /** @return the state column's check constraints (an earlier version's, or Hibernate ORM's), if the table has any */
    TableChecks.StateChecks stateChecks() {
        return await(TableChecks.stateChecks(calls, table), "read the constraints of the idempotency table '" + table
                + "'");
    }

    /** @return whether the table is there as this version wants it */
    boolean upToDate() {
        return await(TableChecks.upToDate(calls, table), "read the idempotency table '" + table + "'");
    }

    /** Keys are written in {@code @WithTransaction} handlers' reactive transactions, through their sessions. */
    @Override
    public boolean joinsTransactions() {
        return true;
    }

    // A caller on a worker thread waits for the pool's answer; never an event loop, whose answers it would hold up.
    private static <T> T await(Uni<T> answer, String operation) {
        if (Context.isOnEventLoopThread()) {
            throw new IllegalStateException("Cannot " + operation + " on an event loop thread: the idempotency store"
                    + " waits for the reactive client's answer there only on worker threads");
        }
        try {
            return answer.await().atMost(ANSWER_WITHIN);
        } catch (RuntimeException e) {
            throw new IllegalStateException("Could not " + operation + ": " + e.getMessage(), e);
        }
    }
}
