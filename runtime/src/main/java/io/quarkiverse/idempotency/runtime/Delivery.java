package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.StoreUnavailableException;

/**
 * One delivery of one message to an {@code @Idempotent} method, from its key to the outcome the broker sees: the only
 * owner of a delivery's state. Its transitions are its methods; the interceptors, the programmatic form and the
 * connectors call them and act on what they answer.
 *
 * <pre>
 *   KEYED ──claim()──────────────▶ CLAIMED ──succeeded()──▶ HANDLED
 *     │                              │  └─awaitOutputAck()─▶ AWAITING_OUTPUT_ACK ──succeeded()──▶ HANDLED
 *     │                              └─confirmInTransaction()─▶ CONFIRMED_IN_TRANSACTION ──succeeded()──▶ HANDLED
 *     └─claimInTransaction()──────▶ WRITTEN_IN_TRANSACTION ──succeeded()──▶ HANDLED
 *   either claim ─▶ DUPLICATE | BUSY                     any held state ──failed()──▶ RETRYING | DEAD_LETTERED
 *   a failing store ─▶ STORE_FAILED        a claim taken over ─▶ CLAIM_LOST        a cancelled handler ─▶ ABANDONED
 * </pre>
 *
 * Settling (succeeded, failed, abandoned) happens once; later calls answer the first outcome.
 */
public final class Delivery {

    /** The invocation context data key under which the outer interceptor leaves the delivery for the inner one. */
    static final String CONTEXT_KEY = Delivery.class.getName();

    /** Where a delivery is in its life. */
    public enum State {
        /** The key is computed; nothing is claimed yet. */
        KEYED,
        /** A lease-mode claim is held (renewed while the handler runs). */
        CLAIMED,
        /** The key is written as confirmed in the handler's transaction, not committed yet. */
        WRITTEN_IN_TRANSACTION,
        /** The lease-mode claim is confirmed in the handler's transaction, not committed yet. */
        CONFIRMED_IN_TRANSACTION,
        /** A processor returned; its key is confirmed once its output is acknowledged downstream. */
        AWAITING_OUTPUT_ACK,
        /** The key was confirmed before: acked without running. */
        DUPLICATE,
        /** Another delivery holds the key: redelivered later. */
        BUSY,
        /** The work is done and the key confirmed: acked. */
        HANDLED,
        /** The attempt failed and was counted: redelivered after a delay. */
        RETRYING,
        /** The last attempt of the budget failed: dead-lettered. */
        DEAD_LETTERED,
        /** The store failed: redelivered later, nothing counted. */
        STORE_FAILED,
        /** The claim was taken over by another delivery before this one finished. */
        CLAIM_LOST,
        /** The handler's result was cancelled: its outcome is unknown, its claim left to run out. */
        ABANDONED
    }

    private final Deliveries deliveries;
    private final MethodPlan plan;
    private final DeliveryPolicy policy;
    private final String channel;
    private final ScopedKey key;
    private String token;
    private final Metadata metadata;
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile State state = State.KEYED;
    private volatile int failedBefore;
    private volatile boolean rolledBack;
    private volatile boolean holdsLease;
    private volatile IdempotencyException outcome;
    private volatile long renewedAt;
    private volatile long claimedAt;

    Delivery(Deliveries deliveries, MethodPlan plan, String channel, ScopedKey key, Metadata metadata) {
        this.deliveries = deliveries;
        this.plan = plan;
        this.policy = plan.policy(channel);
        this.channel = channel;
        this.key = key;
        this.metadata = metadata;
    }

    /** @return the method's plan */
    public MethodPlan plan() {
        return plan;
    }

    /** @return the key, under its scope */
    public ScopedKey key() {
        return key;
    }

    /** @return where the delivery is in its life */
    public State state() {
        return state;
    }

    /** @return whether the key was confirmed before: the handler does not run and the message is acked */
    public boolean isDuplicate() {
        return state == State.DUPLICATE;
    }

    /** @return how many attempts of this key failed before this delivery */
    public int failedBefore() {
        return failedBefore;
    }

    // ---- claiming

    /** This process confirmed the key earlier (the confirmed-keys cache): a duplicate, no claim needed. */
    void confirmedEarlier() {
        duplicate();
        settled.set(true);
    }

    /**
     * Claims the key on a lease, committed on its own.
     *
     * @return whether the handler must run; {@code false} for a duplicate
     * @throws DeliveryInProgressException when another delivery holds the key
     * @throws StoreUnavailableException when the store fails
     */
    public boolean claim() {
        long start = System.nanoTime();
        Claim claim;
        try {
            claim = deliveries.store.claim(key, token(), policy.lease(), policy.retention());
        } catch (RuntimeException e) {
            throw storeFailed("claim", e);
        }
        deliveries.metrics.claimLatency(channel, System.nanoTime() - start);
        boolean run = claimed(claim, State.CLAIMED);
        if (run) {
            holdsLease = true;
            claimedAt = System.nanoTime();
            renewedAt = claimedAt;
            deliveries.renewer.track(this);
        }
        return run;
    }

    /**
     * Writes the key, as confirmed, inside the handler's active transaction (in-transaction mode).
     *
     * @return whether the handler must run; {@code false} for a duplicate
     * @throws DeliveryInProgressException when another delivery holds the key
     * @throws StoreUnavailableException when the store fails
     */
    boolean claimInTransaction() {
        long start = System.nanoTime();
        Claim claim;
        try {
            claim = deliveries.store.claimInTransaction(key, token(), policy.retention());
        } catch (RuntimeException e) {
            throw storeFailed("claim", e);
        }
        deliveries.metrics.claimLatency(channel, System.nanoTime() - start);
        return claimed(claim, State.WRITTEN_IN_TRANSACTION);
    }

    private boolean claimed(Claim claim, State held) {
        switch (claim.result()) {
            case DONE:
                duplicate();
                return false;
            case BUSY:
                state = State.BUSY;
                deliveries.metrics.delivery(channel, Outcome.BUSY);
                Deliveries.LOG.debugf("Key '%s' of %s is being handled by another delivery; redelivering later", key,
                        plan.description());
                throw settle(new DeliveryInProgressException(key, busyDelay(claim.busyFor())));
            case TAKEN_OVER:
                deliveries.metrics.takeover(channel);
                Deliveries.LOG.infof("Took over the claim on key '%s' for %s: its lease ran out (its owner died or"
                        + " stalled)", key, plan.description());
                break;
            default:
                break;
        }
        failedBefore = claim.attempts();
        state = held;
        return true;
    }

    private void duplicate() {
        state = State.DUPLICATE;
        deliveries.metrics.delivery(channel, Outcome.DUPLICATE);
        Deliveries.LOG.debugf("Key '%s' of %s was handled before: acknowledged without running", key,
                plan.description());
    }

    // A holder whose lease runs long may be dead: its messages then wait for the lease rather than come back every
    // requeue delay, but never longer than a third of the lease, so that a live holder's duplicate is acked soon.
    private Duration busyDelay(Duration leaseLeft) {
        Duration delay = deliveries.requeueDelay();
        if (leaseLeft == null) {
            return delay;
        }
        Duration cap = policy.lease().dividedBy(3);
        Duration wait = leaseLeft.compareTo(cap) > 0 ? cap : leaseLeft;
        return wait.compareTo(delay) > 0 ? wait : delay;
    }

    // ---- inside the handler's transaction

    /**
     * Confirms a lease-mode claim inside the handler's active transaction, so that the work and the key commit together.
     *
     * @return {@code false} when the claim was taken over: the caller must roll the transaction back
     * @throws StoreUnavailableException when the store fails (the transaction then rolls back)
     */
    boolean confirmInTransaction() {
        boolean confirmed;
        try {
            confirmed = deliveries.store.confirmInTransaction(key, token(), policy.retention());
        } catch (RuntimeException e) {
            throw storeFailed("confirm", e);
        }
        state = confirmed ? State.CONFIRMED_IN_TRANSACTION : State.CLAIM_LOST;
        return confirmed;
    }

    /** The handler returned but its transaction was marked rollback-only: it rolls back without an exception. */
    void markedRollbackOnly() {
        rolledBack = true;
    }

    // ---- settling

    /**
     * A processor returned its output: the key is confirmed once the output is acknowledged downstream
     * ({@link #succeeded()}), and the attempt fails if it is nacked ({@link #failed}). The lease is renewed meanwhile.
     */
    void awaitOutputAck() {
        if (state == State.CLAIMED) {
            state = State.AWAITING_OUTPUT_ACK;
        }
    }

    /**
     * The handler returned normally, and its transaction (if any) committed; for a processor, its output was
     * acknowledged. Confirms the key unless it is confirmed already.
     *
     * @throws IdempotencyException when that still is a failure: the transaction rolled back without an exception
     *         (a counted attempt), or the claim was taken over
     */
    public void succeeded() {
        if (!settled.compareAndSet(false, true)) {
            rethrowOutcome();
            return;
        }
        deliveries.renewer.untrack(this);
        if (state == State.CLAIM_LOST) {
            deliveries.metrics.delivery(channel, Outcome.CLAIM_LOST);
            throw settle(new ClaimLostException(key));
        }
        if (rolledBack) {
            throw countFailure(new HandlerRolledBackException(key));
        }
        switch (state) {
            case WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION -> handled();
            case CLAIMED, AWAITING_OUTPUT_ACK -> confirmOnItsOwn();
            default -> {
            }
        }
    }

    private void confirmOnItsOwn() {
        try {
            if (deliveries.store.confirm(key, token(), policy.retention())) {
                handled();
                return;
            }
            state = State.CLAIM_LOST;
            deliveries.metrics.delivery(channel, Outcome.CLAIM_LOST);
            Deliveries.LOG.warnf("The claim on key '%s' was no longer this delivery's when %s finished: taken over"
                    + " (the handler outlived its lease without renewal), or lost in a database crash (with"
                    + " asynchronous-claim-commit). Its work is done and the message is acknowledged, but the key is not"
                    + " confirmed: another delivery may repeat the work", key, plan.description());
        } catch (RuntimeException e) {
            state = State.HANDLED;
            deliveries.metrics.delivery(channel, Outcome.STORE_ERROR);
            Deliveries.LOG.errorf(e, "Could not confirm key '%s' after %s succeeded. The work happened, so the message"
                    + " is acknowledged; the claim will run out and a redelivery after that would run it again", key,
                    plan.description());
        }
    }

    private void handled() {
        state = State.HANDLED;
        deliveries.metrics.delivery(channel, Outcome.HANDLED);
        if (deliveries.confirmedKeys != null) {
            deliveries.confirmedKeys.add(key, policy.retention());
        }
    }

    /**
     * The handler failed (it threw, its stage failed, its transaction could not commit, or its output was nacked).
     * Counts the attempt against the key's budget, unless the failure is an outcome of this extension.
     *
     * @param failure what failed
     * @return the exception to nack the message with: a {@link HandlerFailedException} (redelivered after a growing
     *         delay), an {@link AttemptsExhaustedException} (dead-lettered), or the extension's own outcome
     */
    public IdempotencyException failed(Throwable failure) {
        if (!settled.compareAndSet(false, true)) {
            return outcome != null ? outcome
                    : settle(new HandlerFailedException(key, failedBefore + 1,
                            policy.retry().maxAttempts(), deliveries.requeueDelay(), failure));
        }
        deliveries.renewer.untrack(this);
        switch (state) {
            case BUSY, DUPLICATE:
                return outcome != null ? outcome : settle(asOutcome(failure));
            case STORE_FAILED:
                release();
                return outcome;
            case CLAIM_LOST:
                deliveries.metrics.delivery(channel, Outcome.CLAIM_LOST);
                return settle(new ClaimLostException(key));
            default:
                return countFailure(failure);
        }
    }

    /**
     * The handler's result was cancelled: its outcome is unknown (it may still be running), so the claim is neither
     * confirmed nor released: it runs out with its lease.
     */
    public void abandoned() {
        if (settled.compareAndSet(false, true)) {
            deliveries.renewer.untrack(this);
            state = State.ABANDONED;
        }
    }

    private IdempotencyException countFailure(Throwable failure) {
        RetryPolicy retry = policy.retry();
        int counted;
        try {
            counted = deliveries.store.recordFailure(key, token(), String.valueOf(failure), retry.maxAttempts(),
                    policy.retention());
        } catch (RuntimeException e) {
            Deliveries.LOG.warnf("Could not count the failed attempt of key '%s' in the store (%s); deciding on the"
                    + " %d failed before", key, e.toString(), failedBefore);
            counted = -1;
        }
        if (counted == 0) {
            // The key's record is not this delivery's any more: another delivery holds it, and its outcome decides.
            state = State.CLAIM_LOST;
            deliveries.metrics.delivery(channel, Outcome.CLAIM_LOST);
            return settle(new HandlerFailedException(key, failedBefore + 1, retry.maxAttempts(),
                    deliveries.requeueDelay(), failure));
        }
        int attempt = counted > 0 ? counted : failedBefore + 1;
        if (retry.spentBy(attempt)) {
            state = State.DEAD_LETTERED;
            deliveries.metrics.delivery(channel, Outcome.DEAD_LETTERED);
            String suffix = deliveries.logs.admit("dead-lettered:" + plan.description());
            if (suffix != null) {
                Deliveries.LOG.errorf(failure, "Attempt %d of %d of %s for key '%s' (message %s) failed; the budget is"
                        + " spent, so the message is dead-lettered%s", attempt, retry.maxAttempts(),
                        plan.description(), key, deliveries.describeId(metadata), suffix);
            }
            return settle(new AttemptsExhaustedException(key, attempt, failure));
        }
        Duration delay = retry.delayAfter(attempt);
        state = State.RETRYING;
        deliveries.metrics.delivery(channel, Outcome.RETRIED);
        String suffix = deliveries.logs.admit("retried:" + plan.description());
        if (suffix != null) {
            Deliveries.LOG.warnf("Attempt %d of %d of %s for key '%s' failed: %s; retrying in %d ms%s", attempt,
                    retry.maxAttempts(), plan.description(), key, failure, delay.toMillis(), suffix);
        }
        Deliveries.LOG.debugf(failure, "Attempt %d of key '%s' failed", attempt, key);
        return settle(new HandlerFailedException(key, attempt, retry.maxAttempts(), delay, failure));
    }

    private StoreUnavailableException storeFailed(String operation, RuntimeException e) {
        state = State.STORE_FAILED;
        deliveries.metrics.delivery(channel, Outcome.STORE_ERROR);
        String suffix = deliveries.logs.admit("store-failed");
        if (suffix != null) {
            Deliveries.LOG.warnf("The idempotency store failed to %s key '%s' for %s; the message will be retried: %s%s",
                    operation, key, plan.description(), e.toString(), suffix);
        }
        StoreUnavailableException failure = new StoreUnavailableException(operation, key, e);
        outcome = failure;
        return failure;
    }

    // The store failed in the middle of a delivery: give a held lease up so that the redelivery runs as soon as the
    // store answers again, rather than wait for the lease to run out.
    private void release() {
        if (holdsLease) {
            try {
                deliveries.store.release(key, token());
            } catch (RuntimeException ignored) {
                // the store is failing; the claim runs out with its lease
            }
        }
    }

    private IdempotencyException asOutcome(Throwable failure) {
        return failure instanceof IdempotencyException e ? e
                : new HandlerFailedException(key, failedBefore + 1, policy.retry().maxAttempts(),
                        deliveries.requeueDelay(), failure);
    }

    private <E extends IdempotencyException> E settle(E result) {
        settled.set(true);
        outcome = result;
        return result;
    }

    private void rethrowOutcome() {
        if (outcome != null && state != State.HANDLED) {
            throw outcome;
        }
    }

    // ---- lease renewal

    String channel() {
        return channel;
    }

    // A lease-mode claim is fenced by a token of its own. A key written in a transaction needs no fence (its row
    // exists only once that transaction committed): it records the worker, which saves building a token per message.
    String token() {
        String t = token;
        if (t == null) {
            t = plan.inTransaction() ? deliveries.worker() : deliveries.newToken();
            token = t;
        }
        return t;
    }

    Duration lease() {
        return policy.lease();
    }

    Duration retention() {
        return policy.retention();
    }

    long claimedAt() {
        return claimedAt;
    }

    long renewedAt() {
        return renewedAt;
    }

    void renewedAt(long nanos) {
        this.renewedAt = nanos;
    }

    @Override
    public String toString() {
        return "Delivery[" + key + ", " + state + "]";
    }
}
