package io.quarkiverse.idempotency;

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;

/**
 * Remembers which keys were handled. Supply a bean of this type to replace the built-in stores.
 * <p>
 * Every key lives under a scope. A key is either CLAIMED by one worker (a handler is running) or CONFIRMED (a handler
 * finished). Implementations must make {@link #claim} atomic across every process that shares the store, and fence
 * {@link #confirm} and {@link #forget} by the worker that holds the claim, so that a worker whose claim was taken
 * over changes nothing. Methods may block; they are called from worker threads, never from the event loop. Failures
 * are reported by throwing; the caller turns them into a retry of the message.
 */
public interface IdempotencyStore {

    /**
     * Claims a key for this worker in one atomic step.
     *
     * @param scope the scope, never blank
     * @param key the key, never blank
     * @param retention how long the key is remembered from now
     * @param claimTimeout how long an unconfirmed claim is honoured before another worker may take it over
     * @return {@link ClaimResult#NEW} or {@link ClaimResult#TAKEN_OVER} when this worker now holds the claim,
     *         {@link ClaimResult#DONE} when the key is confirmed, {@link ClaimResult#BUSY} when another live claim
     *         holds it
     */
    ClaimResult claim(String scope, String key, Duration retention, Duration claimTimeout);

    /**
     * Turns this worker's claim into a confirmed key, remembered for {@code retention} from now. When
     * {@link #joinsTransactions()} is true and a transaction is active, the change is part of that transaction.
     *
     * @return {@code true} when this worker's claim was confirmed; {@code false} when the claim is no longer this
     *         worker's (it was taken over), in which case nothing changed
     */
    boolean confirm(String scope, String key, Duration retention);

    /**
     * Deletes this worker's own unconfirmed claim, so that a redelivery runs the handler again. Never deletes a
     * confirmed key or another worker's claim.
     *
     * @return {@code true} when a claim was deleted
     */
    boolean forget(String scope, String key);

    /**
     * Extends the life of this worker's claims on the given keys (handlers still running), so that a slow but live
     * handler is not taken over.
     *
     * @param keys the claims to renew
     */
    void renew(Collection<ScopedKey> keys);

    /**
     * Deletes up to {@code limit} expired keys, in either state.
     *
     * @return the number of keys deleted
     */
    int purgeExpired(int limit);

    /**
     * @return the age of the oldest unconfirmed claim, for monitoring; empty when there is none or the store cannot
     *         tell
     */
    default Optional<Duration> oldestClaimAge() {
        return Optional.empty();
    }

    /**
     * Checks that the store can be used (reachable, its table present), for health checks.
     *
     * @throws RuntimeException describing what is wrong
     */
    default void check() {
    }

    /**
     * @return whether {@link #claimConfirmedInTransaction} is supported (the database store)
     */
    default boolean supportsClaimInTransaction() {
        return false;
    }

    /**
     * Claims a key as already confirmed, inside the caller's active transaction: the opt-in mode for transactional
     * handlers whose work is all in the store's database. The row becomes visible when that transaction commits and
     * vanishes if it rolls back; a concurrent delivery of the same key waits for it on the row lock.
     *
     * @return as {@link #claim}
     */
    default ClaimResult claimConfirmedInTransaction(String scope, String key, Duration retention,
            Duration claimTimeout) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot claim inside a transaction");
    }

    /**
     * @return whether {@link #confirm} called inside an active JTA transaction is written in that transaction (a
     *         database store); when false, the key is confirmed only after the handler's transaction committed
     */
    default boolean joinsTransactions() {
        return false;
    }
}
