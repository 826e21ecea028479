package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.ReactiveKeys;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The database store's lease-mode calls through the reactive PostgreSQL client (a Vert.x {@link Pool} on the keys'
 * datasource): the statements {@link DatabaseIdempotencyStore} runs over JDBC, on the same table, each committed on
 * its own, so that a method running on the event loop claims, confirms and counts its attempts without blocking it.
 * Nothing is batched here: the client pipelines the statements of the deliveries in flight on its connections.
 */
public final class PoolKeys implements ReactiveKeys {

    private final DatabaseIdempotencyStore store;
    private final Pool pool;
    private final String claim;
    private final String state;
    private final String confirm;
    private final String recordFailureOfClaim;
    private final String recordFailureAfterRollback;
    private final String release;
    private final String peek;

    public PoolKeys(DatabaseIdempotencyStore store, Pool pool) {
        this.store = store;
        this.pool = pool;
        RecordStatements sql = store.statements();
        this.claim = numbered(sql.claim);
        this.state = numbered(sql.state);
        this.confirm = numbered(sql.confirm);
        this.recordFailureOfClaim = numbered(sql.recordFailureOfClaim);
        this.recordFailureAfterRollback = numbered(sql.recordFailureAfterRollback);
        this.release = numbered(sql.release);
        this.peek = numbered(sql.peek);
    }

    @Override
    public Uni<Claim> claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        String refusal = store.sessionRefusal();
        if (refusal != null) {
            return Uni.createFrom().failure(new IllegalStateException("Cannot claim key '" + key + "': " + refusal));
        }
        String id = StorageKeys.of(key);
        return run(claim, id, id, StorageKeys.scopeColumn(key.scope()), token, lease.toMillis(), retention.toMillis(),
                facts.messageId(), facts.fingerprint(), id).chain(
                        rows -> rows.size() > 0
                                ? Uni.createFrom().item(claimOf(rows.iterator().next()))
                                // a concurrent transaction wrote the key after this statement's snapshot, or holds it
                                : run(state, id)
                                        .map(again -> again.size() > 0 ? claimOf(again.iterator().next()) : Claim.BUSY));
    }

    @Override
    public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
        return run(confirm, retention.toMillis(), StorageKeys.of(key), token).map(rows -> rows.rowCount() == 1);
    }

    @Override
    public Uni<Integer> recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        String refusal = store.sessionRefusal();
        if (refusal != null) {
            return Uni.createFrom().failure(new IllegalStateException("Cannot count a failed attempt of key '" + key
                    + "': " + refusal));
        }
        String id = StorageKeys.of(key);
        String reason = DatabaseIdempotencyStore.reason(failure);
        return run(recordFailureOfClaim, maxAttempts, reason, retention.toMillis(), id, token).chain(rows -> {
            if (rows.size() > 0) {
                return Uni.createFrom().item(rows.iterator().next().getInteger(0));
            }
            // the claim's transaction rolled back with the handler's: the record is written again, as failed
            return run(recordFailureAfterRollback, id, StorageKeys.scopeColumn(key.scope()), maxAttempts, token,
                    retention.toMillis(), reason, id, maxAttempts).map(again -> {
                        Integer counted = again.size() > 0 ? again.iterator().next().getInteger(0) : null;
                        return counted == null ? 0 : counted;
                    });
        });
    }

    @Override
    public Uni<Boolean> release(ScopedKey key, String token) {
        String id = StorageKeys.of(key);
        return run(release, id, token, id, token).map(rows -> rows.iterator().next().getLong(0) > 0);
    }

    @Override
    public Uni<Claim> peek(ScopedKey key) {
        return run(peek, StorageKeys.of(key)).map(rows -> {
            if (rows.size() == 0) {
                return Claim.claimed(ClaimResult.NEW, 0);
            }
            Row row = rows.iterator().next();
            int attempts = row.getInteger(1);
            return switch (row.getString(0)) {
                case "CONFIRMED" -> done(row, 4);
                case "DEAD_LETTERED" -> Claim.deadLettered(attempts, row.getString(3));
                case "CLAIMED" -> Boolean.TRUE.equals(row.getBoolean(2)) ? Claim.BUSY
                        : Claim.claimed(ClaimResult.NEW, attempts);
                default -> Claim.claimed(ClaimResult.NEW, attempts);
            };
        });
    }

    private Uni<RowSet<Row>> run(String statement, Object... values) {
        Tuple tuple = Tuple.tuple();
        for (Object value : values) {
            tuple.addValue(value);
        }
        return pool.preparedQuery(statement).execute(tuple);
    }

    // A row of the claim, or of its second look: as DatabaseIdempotencyStore reads it over JDBC.
    private static Claim claimOf(Row row) {
        ClaimResult result = ClaimResult.valueOf(row.getString(0));
        Integer attempts = row.getInteger(1);
        Long leaseLeft = row.getLong(2);
        return switch (result) {
            case NEW, TAKEN_OVER -> Claim.claimed(result, attempts == null ? 0 : attempts);
            case DONE -> done(row, 4);
            case DEAD_LETTERED -> Claim.deadLettered(attempts == null ? 0 : attempts, row.getString(3));
            default -> leaseLeft == null || leaseLeft <= 0 ? Claim.BUSY : Claim.busyFor(Duration.ofMillis(leaseLeft));
        };
    }

    // A confirmed key, from its message id, fingerprint and age in milliseconds, at column {@code first} on (from 0).
    private static Claim done(Row row, int first) {
        Long age = row.getLong(first + 2);
        return Claim.done(MessageFacts.of(row.getString(first), row.getString(first + 1)),
                age == null ? null : Duration.ofMillis(age));
    }

    /**
     * @return the statement with PostgreSQL's numbered parameters ({@code $1}, {@code $2}, ...) for JDBC's question
     *         marks, which the reactive client does not take; a question mark inside a quoted literal stays
     */
    static String numbered(String jdbc) {
        StringBuilder sql = new StringBuilder(jdbc.length() + 16);
        boolean quoted = false;
        int n = 0;
        for (int i = 0; i < jdbc.length(); i++) {
            char c = jdbc.charAt(i);
            if (c == '\'') {
                quoted = !quoted;
            }
            if (c == '?' && !quoted) {
                sql.append('$').append(++n);
            } else {
                sql.append(c);
            }
        }
        return sql.toString();
    }
}
