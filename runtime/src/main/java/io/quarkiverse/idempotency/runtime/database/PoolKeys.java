package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.KeyCalls;
import io.quarkiverse.idempotency.runtime.database.AsyncGroupCommit.GivenUp;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ClaimRequest;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ConfirmRequest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The database store's lease-mode calls through the reactive PostgreSQL client (a Vert.x {@link Pool} on the keys'
 * datasource): the statements {@link DatabaseIdempotencyStore} runs over JDBC, on the same table, each committed on
 * its own, so that a method running on the event loop claims, confirms and counts its attempts without blocking it.
 * As over JDBC, the claims of deliveries running at once share one statement and one commit, and so do their confirms
 * ({@code quarkus.idempotency.database.lease-batch-size}), without waiting on any thread ({@link AsyncGroupCommit}).
 */
public final class PoolKeys implements KeyCalls {

    private final SqlKeyStore store;
    private final Pool pool;
    private final String claim;
    private final String state;
    private final String confirm;
    private final String recordFailureOfClaim;
    private final String recordFailureAfterRollback;
    private final String release;
    private final String peek;
    private final String claimBatch;
    private final String confirmBatch;
    private final AsyncGroupCommit<ClaimRequest, Claim> claims;
    private final AsyncGroupCommit<ConfirmRequest, Boolean> confirms;

    public PoolKeys(SqlKeyStore store, Pool pool) {
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
        this.claimBatch = numbered(sql.claimBatch);
        this.confirmBatch = numbered(sql.confirmBatch);
        int batchSize = store.leaseBatchSize();
        this.claims = batchSize > 1 ? new AsyncGroupCommit<>(this::claimAll, batchSize, GivenUp.DROPPED) : null;
        this.confirms = batchSize > 1 ? new AsyncGroupCommit<>(this::confirmAll, batchSize, GivenUp.SENT) : null;
    }

    @Override
    public Uni<Claim> claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        String refusal = store.sessionRefusal();
        if (refusal != null) {
            return Uni.createFrom().failure(new IllegalStateException("Cannot claim key '" + key + "': " + refusal));
        }
        ClaimRequest request = new ClaimRequest(key, token, lease, retention, facts);
        return claims != null ? claims.submit(request) : claimAlone(request);
    }

    private Uni<Claim> claimAlone(ClaimRequest request) {
        String id = request.id();
        return run(claim, id, id, StorageKeys.scopeColumn(request.key().scope()), request.token(),
                request.lease().toMillis(), request.retention().toMillis(), request.facts().messageId(),
                request.facts().fingerprint(), id).chain(
                        rows -> rows.size() > 0
                                ? Uni.createFrom().item(claimOf(rows.iterator().next(), 0))
                                : lookAgain(id));
    }

    // A concurrent transaction wrote the key after the claim's snapshot, or holds it: its record, looked at again.
    private Uni<Claim> lookAgain(String id) {
        return run(state, id).map(again -> again.size() > 0 ? claimOf(again.iterator().next(), 0) : Claim.BUSY);
    }

    /** Claims a batch of keys in one statement and one commit (see {@link LeaseBatches.Claims#answers}). */
    private Uni<List<Claim>> claimAll(List<ClaimRequest> batch) {
        if (batch.size() == 1) {
            return claimAlone(batch.get(0)).map(List::of);
        }
        LeaseBatches.Claims claims = new LeaseBatches.Claims(batch);
        int n = claims.size();
        return run(claimBatch, claims.ids, claims.scopes, claims.tokens, claims.leases, claims.retentions,
                claims.messageIds, claims.fingerprints).chain(rows -> {
                    Claim[] answers = new Claim[n];
                    for (Row row : rows) {
                        int position = row.getInteger(0) - 1;
                        answers[position] = row.getString(1) == null ? null : claimOf(row, 1);
                    }
                    RuntimeException[] failures = new RuntimeException[n];
                    List<Uni<Claim>> looked = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        // written after the statement's snapshot, or held: looked at again, as a lone claim does; a
                        // look-up that fails fails that key's request only, not the keys the statement claimed
                        int key = i;
                        looked.add(answers[i] != null ? Uni.createFrom().item(answers[i])
                                : lookAgain(claims.ids[i]).onFailure().recoverWithItem(e -> {
                                    failures[key] = new IllegalStateException("Could not claim key '"
                                            + claims.keyOf(key) + "': " + e.getMessage(), e);
                                    return null;
                                }));
                    }
                    return Uni.join().all(looked).andCollectFailures()
                            .map(looks -> claims.answers(looks.toArray(Claim[]::new), failures));
                });
    }

    @Override
    public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
        ConfirmRequest request = new ConfirmRequest(key, token, retention);
        return confirms != null ? confirms.submit(request) : confirmAlone(request);
    }

    private Uni<Boolean> confirmAlone(ConfirmRequest request) {
        return run(confirm, request.retention().toMillis(), request.id(), request.token())
                .map(rows -> rows.rowCount() == 1);
    }

    /** Confirms a batch of claims in one statement and one commit, each fenced by its token. */
    private Uni<List<Boolean>> confirmAll(List<ConfirmRequest> batch) {
        if (batch.size() == 1) {
            return confirmAlone(batch.get(0)).map(List::of);
        }
        LeaseBatches.Confirms confirms = new LeaseBatches.Confirms(batch);
        return run(confirmBatch, confirms.ids, confirms.tokens, confirms.retentions).map(rows -> {
            Set<String> confirmed = new HashSet<>();
            for (Row row : rows) {
                confirmed.add(LeaseBatches.Confirms.confirmed(row.getString(0), row.getString(1)));
            }
            return confirms.answers(confirmed);
        });
    }

    /** @return how many batches of claims, then of confirms, were sent and how many requests they held (four counts) */
    public long[] batchStatistics() {
        long[] claimed = claims == null ? new long[2] : claims.statistics();
        long[] confirmed = confirms == null ? new long[2] : confirms.statistics();
        return new long[] { claimed[0], claimed[1], confirmed[0], confirmed[1] };
    }

    @Override
    public Uni<Integer> recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        String refusal = store.sessionRefusal();
        if (refusal != null) {
            return Uni.createFrom().failure(new IllegalStateException("Cannot count a failed attempt of key '" + key
                    + "': " + refusal));
        }
        String id = StorageKeys.of(key);
        String reason = RecordStatements.reason(failure);
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

    /** Never asked: the build refuses asynchronous commits where keys go through the reactive client. */
    @Override
    public Uni<Void> awaitDurable() {
        return Uni.createFrom().failure(new UnsupportedOperationException("Keys written through the reactive"
                + " PostgreSQL client are never committed asynchronously"));
    }

    @Override
    public Uni<Claim> peek(ScopedKey key) {
        return run(peek, StorageKeys.of(key)).map(rows -> {
            Row row = rows.size() == 0 ? null : rows.iterator().next();
            if (row == null || row.getString(0) == null) {
                return Claim.claimed(ClaimResult.NEW, 0);
            }
            int attempts = row.getInteger(1);
            return switch (row.getString(0)) {
                case "LOCKED" -> Claim.BUSY; // written in a transaction not committed yet
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

    // A row of the claim, or of its second look, from the columns after the first `skip` ones: as
    // DatabaseIdempotencyStore reads it over JDBC.
    private static Claim claimOf(Row row, int skip) {
        ClaimResult result = ClaimResult.valueOf(row.getString(skip));
        Integer attempts = row.getInteger(skip + 1);
        Long leaseLeft = row.getLong(skip + 2);
        return switch (result) {
            case NEW, TAKEN_OVER -> Claim.claimed(result, attempts == null ? 0 : attempts);
            case DONE -> done(row, skip + 4);
            case DEAD_LETTERED -> Claim.deadLettered(attempts == null ? 0 : attempts, row.getString(skip + 3));
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
