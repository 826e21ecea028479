package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.List;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.KeyCalls;
import io.quarkiverse.idempotency.runtime.database.AsyncGroupCommit.GivenUp;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ClaimRequest;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ConfirmRequest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * The database store's lease-mode calls through the reactive PostgreSQL client (a Vert.x {@link Pool} on the keys'
 * datasource): the protocol {@link DatabaseIdempotencyStore} runs over JDBC ({@link KeyProtocol}), on the same table,
 * each call committed on its own, so that a method running on the event loop claims, confirms and counts its attempts
 * without blocking it. As over JDBC, the claims of deliveries running at once share one statement and one commit, and
 * so do their confirms ({@code quarkus.idempotency.database.lease-batch-size}), without waiting on any thread
 * ({@link AsyncGroupCommit}).
 */
public final class PoolKeys implements KeyCalls {

    private final SqlKeyStore store;
    private final KeyProtocol protocol;
    private final SqlCalls db;
    private final AsyncGroupCommit<ClaimRequest, Claim> claims;
    private final AsyncGroupCommit<ConfirmRequest, Boolean> confirms;

    public PoolKeys(SqlKeyStore store, Pool pool) {
        this.store = store;
        this.protocol = store.protocol();
        this.db = new PoolCalls(pool);
        int batchSize = store.leaseBatchSize();
        this.claims = batchSize > 1 ? new AsyncGroupCommit<>(this::claimAll, batchSize, GivenUp.DROPPED) : null;
        this.confirms = batchSize > 1 ? new AsyncGroupCommit<>(this::confirmAll, batchSize, GivenUp.SENT) : null;
    }

    @Override
    public Uni<Claim> claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        ClaimRequest request = new ClaimRequest(key, token, lease, retention, facts);
        return ReactiveLayout.watched(store, store.readyToWrite(retention).chain(partitioned -> claims != null
                ? claims.submit(request)
                : protocol.claim(db, request, partitioned)));
    }

    /** Claims a batch of keys in one statement and one commit (see {@link LeaseBatches.Claims#answers}). */
    private Uni<List<Claim>> claimAll(List<ClaimRequest> batch) {
        // every request was readied before it was submitted; the batch, for the longest retention among them, learns
        // the layout now (in memory, unless the layout changed in between)
        Duration longest = batch.stream().map(ClaimRequest::retention).max(Duration::compareTo).orElseThrow();
        return store.readyToWrite(longest).chain(partitioned -> {
            if (batch.size() == 1) {
                return protocol.claim(db, batch.get(0), partitioned).map(List::of);
            }
            LeaseBatches.Claims claims = new LeaseBatches.Claims(batch);
            RuntimeException[] failures = new RuntimeException[claims.size()];
            return protocol.claimBatch(db, claims, failures, partitioned)
                    .map(answers -> claims.answers(answers, failures));
        });
    }

    @Override
    public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
        // the confirm moves the key's expiry: a partition must hold it, as for a claim
        return store.readyToWrite(retention).chain(partitioned -> confirms != null
                ? confirms.submit(new ConfirmRequest(key, token, retention))
                : protocol.confirm(db, key, token, retention));
    }

    /** Confirms a batch of claims in one statement and one commit, each fenced by its token. */
    private Uni<List<Boolean>> confirmAll(List<ConfirmRequest> batch) {
        if (batch.size() == 1) {
            ConfirmRequest only = batch.get(0);
            return protocol.confirm(db, only.key(), only.token(), only.retention()).map(List::of);
        }
        return protocol.confirmBatch(db, new LeaseBatches.Confirms(batch));
    }

    /** @return how many batches of claims, then of confirms, were sent and how many requests they held (four counts) */
    public long[] batchStatistics() {
        long[] claimed = claims == null ? new long[2] : claims.statistics();
        long[] confirmed = confirms == null ? new long[2] : confirms.statistics();
        return new long[] { claimed[0], claimed[1], confirmed[0], confirmed[1] };
    }

    @Override
    public Uni<Integer> recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        return ReactiveLayout.watched(store, store.readyToWrite(retention).chain(partitioned -> protocol
                .recordFailure(db, key, token, failure, maxAttempts, retention, partitioned)));
    }

    @Override
    public Uni<Boolean> release(ScopedKey key, String token) {
        return protocol.release(db, key, token);
    }

    /**
     * One WAL flush through the reactive client, whose statement also reads whether a form of the key is confirmed (see
     * {@link WalFlushes}). A key this client finds confirmed may have been confirmed by an asynchronous commit: a JDBC
     * channel's with asynchronous-commit, or one of an instance that still commits so during a rollout. Asked for
     * duplicates only, so not shared between callers.
     */
    @Override
    public Uni<Boolean> awaitConfirmedDurably(List<ScopedKey> forms) {
        return protocol.confirmedOnceFlushed(db, forms.stream().map(StorageKeys::of).toList())
                .map(confirmed -> !confirmed.isEmpty());
    }

    @Override
    public Uni<Claim> peek(ScopedKey key) {
        return protocol.peek(db, key);
    }
}
