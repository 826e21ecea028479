package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.HandlerTransactionAbortedException;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.smallrye.mutiny.Uni;

/**
 * A delivery's writes inside its handler's own transaction, each answering a {@code Uni}: {@link Delivery} writes them
 * once whichever transaction it is. Two executors: {@link #jta} (a {@code @Transactional} handler's JTA transaction,
 * bound to its thread, so each call runs on the calling thread) and the session of a {@code @WithTransaction} handler
 * ({@code SessionKeys}).
 */
public interface TransactionKeys {

    /** @see IdempotencyStore#claimInTransaction(ScopedKey, String, Duration, boolean, MessageFacts) */
    Uni<Claim> claim(ScopedKey key, String token, Duration retention, boolean asynchronousCommit, MessageFacts facts);

    /**
     * @see IdempotencyStore#confirmInTransaction(ScopedKey, String, Duration)
     * @return fails with {@link HandlerTransactionAbortedException} when the database aborted the transaction under the
     *         handler
     */
    Uni<Boolean> confirm(ScopedKey key, String token, Duration retention);

    /** The store's own writes in the JTA transaction of the calling thread, made on that thread. */
    static TransactionKeys jta(IdempotencyStore store) {
        return new TransactionKeys() {
            @Override
            public Uni<Claim> claim(ScopedKey key, String token, Duration retention, boolean asynchronousCommit,
                    MessageFacts facts) {
                return Uni.createFrom().item(() -> store.claimInTransaction(key, token, retention, asynchronousCommit,
                        facts));
            }

            @Override
            public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
                return Uni.createFrom().item(() -> store.confirmInTransaction(key, token, retention));
            }
        };
    }
}
