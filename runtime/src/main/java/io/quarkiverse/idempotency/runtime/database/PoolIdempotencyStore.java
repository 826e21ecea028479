package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The database store of an application that has only the reactive PostgreSQL client (Hibernate Reactive, no JDBC
 * datasource): the same table and statements as {@link DatabaseIdempotencyStore}, sent through the client's pool. The
 * lease-mode calls of methods on the event loop go through {@link #keys()} without blocking; the calls of this
 * interface, which callers make from worker threads (a {@code @Blocking} method, the purge job, the health check, the
 * lease renewal), wait for the pool's answer. Keys are written in {@code @WithTransaction} handlers' transactions
 * through their sessions ({@link SessionKeys}). A table partitioned by time is not supported (startup says so).
 */
public class PoolIdempotencyStore implements IdempotencyStore, SqlKeyStore {

    /** How long a blocking caller waits for the pool's answer before the call fails as a store failure. */
    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(60);

    private final Pool pool;
    private final String table;
    private final RecordStatements sql;
    private final int leaseBatchSize;
    private final PoolKeys keys;
    private final String renew;
    private final String purge;
    private final String releaseDeadLetter;
    private final String endLeasesOfEarlierStarts;
    private final String columns;
    private final String stateChecks;

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
        this.pool = pool;
        this.table = table;
        this.sql = new RecordStatements(table, asynchronousClaimCommit);
        this.leaseBatchSize = leaseBatchSize;
        this.keys = new PoolKeys(this, pool);
        this.renew = PoolKeys.numbered(sql.renew);
        this.purge = PoolKeys.numbered(sql.purge);
        this.releaseDeadLetter = PoolKeys.numbered(sql.releaseDeadLetter);
        this.endLeasesOfEarlierStarts = PoolKeys.numbered(sql.endLeasesOfEarlierStarts);
        this.columns = PoolKeys.numbered(RecordStatements.columnsOf());
        this.stateChecks = PoolKeys.numbered(RecordStatements.stateChecks());
    }

    /** @return the store's calls without blocking, for methods on the event loop */
    public PoolKeys keys() {
        return keys;
    }

    /** @return the pool the store's statements go through */
    public Pool pool() {
        return pool;
    }

    /** @return the table's name */
    public String table() {
        return table;
    }

    @Override
    public RecordStatements statements() {
        return sql;
    }

    @Override
    public String sessionRefusal() {
        return null; // a partitioned table is refused at startup (PoolSchema)
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
        await(run(renew, renewals.ids, renewals.tokens, renewals.leases), "renew " + renewals.ids.length + " claims");
    }

    @Override
    public int endLeasesOfEarlierStarts(String instance, String current) {
        return await(run(endLeasesOfEarlierStarts, instance, current),
                "end the leases of the claims of earlier starts of '" + instance + "'").rowCount();
    }

    @Override
    public boolean releaseDeadLetter(ScopedKey key) {
        return await(run(releaseDeadLetter, StorageKeys.of(key)), "release key '" + key + "'").rowCount() == 1;
    }

    /** Releases a dead-lettered record by its id as the table holds it (the Dev UI's button). */
    public boolean releaseDeadLetter(String id) {
        return await(run(releaseDeadLetter, id), "release key '" + id + "'").rowCount() == 1;
    }

    @Override
    public int purgeExpired(int limit) {
        return await(run(purge, limit), "purge expired keys").rowCount();
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        RowSet<Row> rows = await(run(sql.oldestClaim), "read the oldest claim");
        Double seconds = rows.iterator().next().getDouble(0);
        return seconds == null ? Optional.empty() : Optional.of(Duration.ofMillis((long) (seconds * 1000)));
    }

    /**
     * @throws StoreMisconfiguredException when the table is missing or lacks columns of this version, naming the remedy
     */
    @Override
    public void check() {
        List<String> missing = missingColumns();
        if (missing.size() == RecordStatements.COLUMNS.size()) {
            throw new StoreMisconfiguredException("The idempotency table '" + table + "' does not exist. Let the"
                    + " extension create it at startup (quarkus.idempotency.database.schema-management=update, the"
                    + " default in dev and test mode), or create it with your migrations: "
                    + String.join("; ", RecordStatements.schema(table)), null);
        }
        List<String> remedy = new ArrayList<>(RecordStatements.schema(table));
        String outdated = outdatedStateConstraint();
        if (outdated != null) {
            missing.add("the states FAILED and DEAD_LETTERED in its state check constraint " + outdated);
            remedy.add(RecordStatements.stateConstraint(table, outdated));
        }
        if (!missing.isEmpty()) {
            throw new StoreMisconfiguredException("The idempotency table '" + table + "' is from an older version of"
                    + " the extension: it lacks " + String.join(", ", missing) + ". Bring it up to date with "
                    + String.join("; ", remedy)
                    + " (quarkus.idempotency.database.schema-management=update does it at startup)", null);
        }
    }

    /** @return the columns this version needs that the table lacks (all of them when there is no table) */
    List<String> missingColumns() {
        Set<String> found = new HashSet<>();
        for (Row row : await(run(columns, table), "read the columns of the idempotency table '" + table + "'")) {
            found.add(row.getString(0));
        }
        List<String> missing = new ArrayList<>();
        for (String column : RecordStatements.COLUMNS.keySet()) {
            if (!found.contains(column)) {
                missing.add(column);
            }
        }
        return missing;
    }

    /** @return the name of the state column's check constraint when it is an earlier version's (fewer states) */
    String outdatedStateConstraint() {
        for (Row row : await(run(stateChecks, table), "read the constraints of the idempotency table '" + table + "'")) {
            if (!row.getString(1).contains("DEAD_LETTERED")) {
                return row.getString(0);
            }
        }
        return null;
    }

    /** Keys are written in {@code @WithTransaction} handlers' reactive transactions, through their sessions. */
    @Override
    public boolean joinsTransactions() {
        return true;
    }

    Uni<RowSet<Row>> run(String statement, Object... values) {
        Tuple tuple = Tuple.tuple();
        for (Object value : values) {
            tuple.addValue(value);
        }
        return pool.preparedQuery(statement).execute(tuple);
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
