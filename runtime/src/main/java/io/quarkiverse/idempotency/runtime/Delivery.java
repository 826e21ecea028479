package io.quarkiverse.idempotency.runtime;

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
 * connectors call them and act on what they answer. Each transition that ends the delivery reports it to the
 * {@link DeliveryListener}, which counts and logs; nothing here does either.
 *
 * <pre>
 *   KEYED ──claim()──────────────▶ CLAIMED ──succeeded()──▶ HANDLED | UNCONFIRMED
 *     │                              │  └─awaitOutputAck()─▶ AWAITING_OUTPUT_ACK ──succeeded()──▶ HANDLED
 *     │                              └─confirmInTransaction()─▶ CONFIRMED_IN_TRANSACTION ──succeeded()──▶ HANDLED
 *     └─claimInTransaction()──────▶ WRITTEN_IN_TRANSACTION ──succeeded()──▶ HANDLED
 *   either claim ─▶ DUPLICATE | BUSY      a transaction that rolls back without an exception ─▶ ROLLED_BACK
 *   any held state ──failed()──▶ RETRYING | DEAD_LETTERED        a claim taken over ─▶ CLAIM_LOST
 *   a failing store ─▶ STORE_FAILED                              a cancelled handler ─▶ ABANDONED
 * </pre>
 *
 * A delivery ends once; a later {@link #succeeded()} or {@link #failed} answers how it ended.
 */
public final class Delivery {

    /** The invocation context data key under which the outer interceptor leaves the delivery for the inner one. */
    static final String CONTEXT_KEY = Delivery.class.getName();

    private final DeliveryContext context;
    private final MethodPlan plan;
    private final DeliveryPolicy policy;
    private final String channel;
    private final ScopedKey key;
    private final Metadata metadata;
    private volatile DeliveryState state = DeliveryState.KEYED;
    private volatile IdempotencyException answer;
    private String token;
    private int failedBefore;
    private Lease lease;

    Delivery(DeliveryContext context, MethodPlan plan, String channel, ScopedKey key, Metadata metadata) {
        this.context = context;
        this.plan = plan;
        this.policy = plan.policy(channel);
        this.channel = channel;
        this.key = key;
        this.metadata = metadata;
    }

    // ---- claiming

    /** This process confirmed the key earlier (the confirmed-keys cache): a duplicate, no claim needed. */
    void confirmedEarlier() {
        end(DeliveryState.DUPLICATE, null, null);
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
            claim = context.store().claim(key, token(), policy.lease(), policy.retention());
        } catch (RuntimeException e) {
            throw storeFailed("claim", e);
        }
        context.listener().claimAnswered(this, System.nanoTime() - start);
        boolean run = claimed(claim, DeliveryState.CLAIMED);
        if (run) {
            lease = new Lease(key, token(), policy.lease(), policy.retention());
            context.renewer().track(lease);
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
            claim = context.store().claimInTransaction(key, token(), policy.retention());
        } catch (RuntimeException e) {
            throw storeFailed("claim", e);
        }
        context.listener().claimAnswered(this, System.nanoTime() - start);
        return claimed(claim, DeliveryState.WRITTEN_IN_TRANSACTION);
    }

    private boolean claimed(Claim claim, DeliveryState held) {
        switch (claim.result()) {
            case DONE:
                end(DeliveryState.DUPLICATE, null, null);
                return false;
            case BUSY:
                throw end(DeliveryState.BUSY, new DeliveryInProgressException(key,
                        policy.busyDelay(claim.busyFor(), context.requeueDelay())), null);
            case TAKEN_OVER:
                context.listener().tookOver(this);
                break;
            default:
                break;
        }
        failedBefore = claim.attempts();
        state = held;
        return true;
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
            confirmed = context.store().confirmInTransaction(key, token(), policy.retention());
        } catch (RuntimeException e) {
            throw storeFailed("confirm", e);
        }
        state = confirmed ? DeliveryState.CONFIRMED_IN_TRANSACTION : DeliveryState.LOST_IN_TRANSACTION;
        return confirmed;
    }

    /** The handler returned but its transaction was marked rollback-only: it rolls back without an exception. */
    void markedRollbackOnly() {
        if (!state.ended()) {
            state = DeliveryState.ROLLED_BACK;
        }
    }

    /**
     * A processor returned its output: the key is confirmed once the output is acknowledged downstream
     * ({@link #succeeded()}), and the attempt fails if it is nacked ({@link #failed}). The lease is renewed meanwhile.
     */
    void awaitOutputAck() {
        if (state == DeliveryState.CLAIMED) {
            state = DeliveryState.AWAITING_OUTPUT_ACK;
        }
    }

    // ---- ending

    /**
     * The handler returned normally, and its transaction (if any) committed; for a processor, its output was
     * acknowledged. Confirms the key unless it is confirmed already.
     *
     * @throws IdempotencyException when that still is a failure: the transaction rolled back without an exception
     *         (a counted attempt), or the claim was taken over
     */
    public synchronized void succeeded() {
        switch (state) {
            case WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION -> handled();
            case CLAIMED, AWAITING_OUTPUT_ACK -> confirmOnItsOwn();
            case LOST_IN_TRANSACTION -> throw end(DeliveryState.CLAIM_LOST, new ClaimLostException(key), null);
            case ROLLED_BACK -> throw countFailure(new HandlerRolledBackException(key));
            default -> {
                if (answer != null && state != DeliveryState.HANDLED) {
                    throw answer;
                }
            }
        }
    }

    private void confirmOnItsOwn() {
        untrack();
        boolean confirmed;
        try {
            confirmed = context.store().confirm(key, token(), policy.retention());
        } catch (RuntimeException e) {
            end(DeliveryState.UNCONFIRMED, null, e);
            return;
        }
        if (confirmed) {
            handled();
        } else {
            end(DeliveryState.CLAIM_LOST, null, null); // the work happened: the message is acked all the same
        }
    }

    private void handled() {
        untrack();
        end(DeliveryState.HANDLED, null, null);
        if (context.confirmedKeys() != null) {
            context.confirmedKeys().add(key, policy.retention());
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
    public synchronized IdempotencyException failed(Throwable failure) {
        untrack();
        switch (state) {
            case KEYED, CLAIMED, WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION, AWAITING_OUTPUT_ACK, ROLLED_BACK:
                return countFailure(failure);
            case LOST_IN_TRANSACTION:
                return end(DeliveryState.CLAIM_LOST, new ClaimLostException(key), null);
            case STORE_FAILED:
                release();
                return answer;
            default:
                return answer != null ? answer : asOutcome(failure);
        }
    }

    /**
     * The handler's result was cancelled: its outcome is unknown (it may still be running), so the claim is neither
     * confirmed nor released: it runs out with its lease.
     */
    public synchronized void abandoned() {
        if (!state.ended()) {
            untrack();
            end(DeliveryState.ABANDONED, null, null);
        }
    }

    private IdempotencyException countFailure(Throwable failure) {
        RetryPolicy retry = policy.retry();
        int counted;
        try {
            counted = context.store().recordFailure(key, token(), String.valueOf(failure), retry.maxAttempts(),
                    policy.retention());
        } catch (RuntimeException e) {
            counted = -1;
            context.listener().failureNotCounted(this, e);
        }
        if (counted == 0) {
            // The key's record is not this delivery's any more: another delivery holds it, and its outcome decides.
            return end(DeliveryState.CLAIM_LOST, new HandlerFailedException(key, failedBefore + 1, retry.maxAttempts(),
                    context.requeueDelay(), failure), failure);
        }
        int attempt = counted > 0 ? counted : failedBefore + 1;
        if (retry.spentBy(attempt)) {
            return end(DeliveryState.DEAD_LETTERED, new AttemptsExhaustedException(key, attempt, failure), failure);
        }
        return end(DeliveryState.RETRYING, new HandlerFailedException(key, attempt, retry.maxAttempts(),
                retry.delayAfter(attempt), failure), failure);
    }

    private StoreUnavailableException storeFailed(String operation, RuntimeException e) {
        return end(DeliveryState.STORE_FAILED, new StoreUnavailableException(operation, key, e), e);
    }

    // The store failed in the middle of a delivery: give a held lease up so that the redelivery runs as soon as the
    // store answers again, rather than wait for the lease to run out.
    private void release() {
        if (lease != null) {
            try {
                context.store().release(key, token());
            } catch (RuntimeException ignored) {
                // the store is failing; the claim runs out with its lease
            }
        }
    }

    private IdempotencyException asOutcome(Throwable failure) {
        return failure instanceof IdempotencyException e ? e
                : new HandlerFailedException(key, failedBefore + 1, policy.retry().maxAttempts(),
                        context.requeueDelay(), failure);
    }

    private <E extends IdempotencyException> E end(DeliveryState ended, E result, Throwable cause) {
        answer = result;
        state = ended;
        context.listener().ended(this, cause);
        return result;
    }

    private void untrack() {
        if (lease != null) {
            context.renewer().untrack(lease);
        }
    }

    // A lease-mode claim is fenced by a token of its own. A key written in a transaction needs no fence (its row
    // exists only once that transaction committed): it records the worker, which saves building a token per message.
    private String token() {
        String t = token;
        if (t == null) {
            t = plan.inTransaction() ? context.tokens().worker() : context.tokens().next();
            token = t;
        }
        return t;
    }

    // ---- what the listener, the interceptors and the connectors read

    /** @return the method's plan */
    public MethodPlan plan() {
        return plan;
    }

    /** @return the method's settings on the delivery's channel */
    public DeliveryPolicy policy() {
        return policy;
    }

    /** @return the channel that delivered the message (or the programmatic form's scope) */
    public String channel() {
        return channel;
    }

    /** @return the key, under its scope */
    public ScopedKey key() {
        return key;
    }

    /** @return the message's metadata */
    public Metadata metadata() {
        return metadata;
    }

    /** @return where the delivery is in its life */
    public DeliveryState state() {
        return state;
    }

    /** @return what the message was nacked with, once the delivery ended that way; else {@code null} */
    public IdempotencyException answer() {
        return answer;
    }

    /** @return whether the key was confirmed before: the handler does not run and the message is acked */
    public boolean isDuplicate() {
        return state == DeliveryState.DUPLICATE;
    }

    /** @return how many attempts of this key failed before this delivery */
    public int failedBefore() {
        return failedBefore;
    }

    @Override
    public String toString() {
        return "Delivery[" + key + ", " + state + "]";
    }
}
