package io.quarkiverse.idempotency;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Remembers which keys were handled. Supply a bean of this type to replace the built-in stores.
 * <p>
 * Every key lives under a scope. A key's record is in one of four states: {@code CLAIMED} (a delivery holds it on a
 * lease: its handler is running, or died), {@code CONFIRMED} (a handler finished: the message was handled),
 * {@code FAILED} (the last attempt failed; the record counts the failed attempts, and the next delivery may try again)
 * and {@code DEAD_LETTERED} (the attempt budget was spent and the message dead-lettered; a later delivery of the key,
 * the same message again or republished, is dead-lettered again at once, until an operator
 * {@linkplain #releaseDeadLetter releases} the key).
 * <p>
 * Each claim carries a token chosen by the caller, unique per claim: {@link #confirm}, {@link #recordFailure},
 * {@link #release} and {@link #renew} change only the record of the claim holding that token, so that a delivery
 * whose claim was taken over (even by a later delivery in the same process) changes nothing.
 * Implementations must make {@link #claim} atomic across every process that shares the store. Methods may block; they
 * are called from worker threads, never from the event loop. Failures are reported by throwing; the caller turns them
 * into a retry of the message.
 */
public interface IdempotencyStore {

    /**
     * Claims a key on a lease, committed on its own (never as part of a caller's transaction), in one atomic step:
     * the key is free (never seen, or its last attempt failed: {@link ClaimResult#NEW}), or its claim's lease ran out
     * (its owner died: {@link ClaimResult#TAKEN_OVER}, the lost attempt not counted yet), so it is now this token's; or
     * it is confirmed ({@link ClaimResult#DONE}); or dead-lettered ({@link ClaimResult#DEAD_LETTERED}, with its last
     * failure); or another live claim holds it ({@link ClaimResult#BUSY}).
     *
     * @param key the key, under its scope
     * @param token this claim's token, unique per claim
     * @param lease how long the claim is honoured unless renewed
     * @param retention how long the key's record is kept from now
     * @return the answer, with the number of failed attempts already counted for the key
     */
    Claim claim(ScopedKey key, String token, Duration lease, Duration retention);

    /**
     * {@link #claim(ScopedKey, String, Duration, Duration)}, keeping {@code facts} with the key when it is claimed, and
     * answering a confirmed key with the facts kept ({@link Claim#seen()}) and its age ({@link Claim#age()}), so that a
     * duplicate can be told apart: the same message again, a new message with the key, a different payload. A store
     * that keeps nothing about messages need not override it.
     */
    default Claim claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        return claim(key, token, lease, retention);
    }

    /**
     * Turns this token's claim into a confirmed key, remembered for {@code retention} from now, committed on its own
     * (never as part of a caller's transaction).
     *
     * @return {@code true} when the claim was confirmed; {@code false} when the claim is no longer this token's (it was
     *         taken over), in which case nothing changed
     */
    boolean confirm(ScopedKey key, String token, Duration retention);

    /**
     * Counts a failed attempt of this token's delivery, committed on its own: the claim (if this token still holds one)
     * is released, so that the next delivery may try again, and the record remembers how many attempts failed and the
     * last failure. When the count reaches {@code maxAttempts}, the record is marked dead-lettered.
     * <p>
     * A delivery whose claim lived only in a transaction that rolled back has no record to update: the failure is
     * then counted on a record of its own (or on the key's earlier failed record), unless another delivery holds the
     * key right now.
     *
     * @param failure a short description of the failure (exception class and message)
     * @return the number of failed attempts counted so far, this one included; {@code 0} when the key's record is not
     *         this token's to count on (taken over, confirmed by another delivery, or held by one right now)
     */
    int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention);

    /**
     * Deletes this token's unconfirmed claim without counting a failed attempt (the store failed in the middle of a
     * delivery, or its outcome is unknown), so that a redelivery runs at once. Never touches a confirmed key or
     * another token's claim.
     *
     * @return {@code true} when a claim was released
     */
    boolean release(ScopedKey key, String token);

    /**
     * Extends the leases of running handlers' claims, so that a slow but live handler is not taken over. Must not wait
     * for a claim's record that another transaction holds (a confirm about to commit): it skips it.
     *
     * @param claims the claims to renew, each with the lease it extends to from now
     */
    void renew(Collection<HeldClaim> claims);

    /**
     * Releases a dead-lettered key, for an operator who fixed the cause and replays its message: the key becomes free
     * with a fresh attempt budget, so that the next delivery runs. Never touches a key in another state.
     *
     * @return {@code true} when a dead-lettered key was released
     */
    default boolean releaseDeadLetter(ScopedKey key) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot release dead-lettered keys");
    }

    /**
     * Lists dead-lettered keys, for operators (the Dev UI, the management endpoint, {@link DeadLetters}).
     *
     * @return the keys the filter matches, the most recently dead-lettered first, from its offset, at most its limit
     */
    default List<DeadLetter> deadLetters(DeadLetterFilter filter) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot list dead-lettered keys");
    }

    /**
     * Releases every dead-lettered key the filter matches (its offset and limit ignored), as
     * {@link #releaseDeadLetter} does one, in one step.
     *
     * @return how many keys were released
     */
    default int releaseDeadLetters(DeadLetterFilter filter) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot release dead-lettered keys");
    }

    /**
     * What a claim of the key would find, without claiming it or waiting for anyone: {@link ClaimResult#NEW} when the
     * key is free (never seen, its last attempt failed, or its claim's lease ran out; with the failed attempts),
     * {@link ClaimResult#DONE} (with the facts kept and its age), {@link ClaimResult#DEAD_LETTERED} (with its last
     * failure) or {@link ClaimResult#BUSY} (a live claim holds it). Asked while {@code key-storage} changes, for a key's
     * other form; only of a store that {@link #peeks()}.
     */
    default Claim peek(ScopedKey key) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot look keys up");
    }

    /**
     * Ends the leases of the lease-mode claims held by earlier starts of this instance, which are dead: their claims'
     * tokens begin with {@code instance} but not with {@code current}. Each such claim is then taken over by the next
     * delivery of its key, as any claim whose lease ran out. Called once at startup, only when the instance has a name
     * ({@code quarkus.idempotency.instance-id}); a store whose claims do not outlive its process (the memory store)
     * has none to end.
     *
     * @param instance the start of the tokens of every start of this instance (its name and {@code @})
     * @param current the start of the tokens of this start
     * @return how many leases were ended
     */
    default int endLeasesOfEarlierStarts(String instance, String current) {
        return 0;
    }

    /**
     * @return whether every call of this store returns at once without waiting on I/O or a lock held elsewhere (the
     *         memory store), so that it may be called on an event loop; {@code false}, the default, has calls made on a
     *         worker thread
     */
    default boolean neverBlocks() {
        return false;
    }

    /** @return whether this store answers {@link #peek}: the built-in stores do */
    default boolean peeks() {
        return false;
    }

    /**
     * Deletes up to {@code limit} expired keys, in any state.
     *
     * @return the number of keys deleted
     */
    int purgeExpired(int limit);

    /**
     * @return the age of the oldest live claim, for monitoring; empty when there is none or the store cannot tell
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
     * @return whether this store can write keys inside the caller's JTA transaction ({@link #claimInTransaction},
     *         {@link #confirmInTransaction}): the database store can; the memory store cannot
     */
    default boolean joinsTransactions() {
        return false;
    }

    /**
     * @return whether this store can let the caller's transaction commit before its changes are durable and tell later
     *         when they are ({@link #claimInTransaction(ScopedKey, String, Duration, boolean)},
     *         {@link #awaitDurable}): the database store can
     */
    default boolean commitsAsynchronously() {
        return false;
    }

    /**
     * {@link #claimInTransaction(ScopedKey, String, Duration)}; and, with {@code asynchronousCommit}, when the key is
     * claimed ({@link ClaimResult#NEW}), the caller's transaction made to commit without waiting for its changes to be
     * durable: a crash of the store's server right after the commit may lose them, key and work alike.
     * {@link #awaitDurable} tells when they are durable. Only asked of a store that {@link #commitsAsynchronously}.
     */
    default Claim claimInTransaction(ScopedKey key, String token, Duration retention, boolean asynchronousCommit) {
        if (asynchronousCommit) {
            throw new UnsupportedOperationException(getClass().getName() + " cannot commit asynchronously");
        }
        return claimInTransaction(key, token, retention);
    }

    /**
     * {@link #claimInTransaction(ScopedKey, String, Duration, boolean)}, keeping {@code facts} with the key, and
     * answering a confirmed key with the facts kept and its age, as {@link #claim(ScopedKey, String, Duration, Duration,
     * MessageFacts)} does.
     */
    default Claim claimInTransaction(ScopedKey key, String token, Duration retention, boolean asynchronousCommit,
            MessageFacts facts) {
        return claimInTransaction(key, token, retention, asynchronousCommit);
    }

    /**
     * Returns once every transaction that committed before this call is durable.
     *
     * @throws RuntimeException when that cannot be known (the store is unreachable): such a commit may have been lost
     */
    default void awaitDurable() {
    }

    /**
     * {@link #awaitDurable()}, answering whether one of {@code forms} (a key in each form it may be stored under) is
     * then recorded as confirmed. A crash of the store's server can lose a commit that returned before it was durable,
     * and the work committed with it: a delivery acknowledged on such a commit would be lost for good. So the answer is
     * {@code false} when the commit that confirmed the key is gone, even though the flush after the restart succeeded.
     *
     * @throws RuntimeException when that cannot be known (the store is unreachable)
     */
    default boolean awaitConfirmedDurably(List<ScopedKey> forms) {
        awaitDurable();
        return true;
    }

    /**
     * Claims a key inside the caller's active transaction, recorded as confirmed: the record becomes visible when that
     * transaction commits and vanishes if it rolls back (see {@link IdempotencyMode#IN_TRANSACTION}). Must not wait for another
     * transaction holding the key: it answers {@link ClaimResult#BUSY} at once.
     * A key whose last attempt failed, or whose lease-mode claim ran out, is taken over in the same way; a live
     * lease-mode claim is {@link ClaimResult#BUSY}.
     *
     * @return the answer, with the number of failed attempts already counted for the key
     */
    default Claim claimInTransaction(ScopedKey key, String token, Duration retention) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot claim inside a transaction");
    }

    /**
     * Confirms this token's lease-mode claim inside the caller's active transaction.
     *
     * @return {@code false} when the claim is no longer this token's: the caller must roll the transaction back
     * @throws HandlerTransactionAbortedException when the transaction can no longer run the statement because of what
     *         the handler did in it
     */
    default boolean confirmInTransaction(ScopedKey key, String token, Duration retention) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot confirm inside a transaction");
    }

    /**
     * Called in the caller's active transaction after the handler returned, when the key was written there
     * ({@link #claimInTransaction}): a transaction that the database aborted (the handler caught an SQL error of its
     * own and returned) would roll back at its commit without saying so, key and work alike, and the message would be
     * acknowledged for work that never happened.
     *
     * @throws HandlerTransactionAbortedException when the transaction was aborted
     */
    default void checkTransaction(ScopedKey key) {
    }

    /**
     * A claim a running handler holds, to be renewed.
     *
     * @param key the key
     * @param token the claim's token
     * @param lease the lease it extends to from now
     */
    record HeldClaim(ScopedKey key, String token, Duration lease) {
    }
}
