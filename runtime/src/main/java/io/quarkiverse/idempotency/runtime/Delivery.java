package io.quarkiverse.idempotency.runtime;

import static io.quarkiverse.idempotency.runtime.Unis.SETTLED;
import static io.quarkiverse.idempotency.runtime.Unis.failure;
import static io.quarkiverse.idempotency.runtime.Unis.now;
import static io.quarkiverse.idempotency.runtime.Unis.settled;

import java.time.Duration;
import java.util.function.Function;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.HandlerTransactionAbortedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.LeaseExpiredException;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.PayloadMismatchException;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.StoreUnavailableException;
import io.smallrye.mutiny.Uni;

/**
 * One delivery of one message to an {@code @Idempotent} method, from its key to the outcome the broker sees: the only
 * owner of its state ({@link DeliveryState} has the diagram). Its transitions are its methods, called by the
 * interceptors, the programmatic form and the connectors; each reports to the {@link DeliveryListener}, which counts
 * and logs. A delivery ends once; a later {@link #succeeded()} or {@link #failed} answers how it ended.
 */
public final class Delivery implements DeliveryView {

    private final DeliveryContext context;
    private final DeliveryTarget target;
    private volatile DeliveryState state = DeliveryState.KEYED;
    private volatile IdempotencyException answer;
    private final KeyRecord record;
    private final Arrival arrival;
    private int failedBefore;
    /** Whether the handler's transaction commits asynchronously: its message is acked once the commit is durable. */
    private boolean committedAsynchronously;
    /** The key's record found confirmed by a commit that may not be durable yet ({@link DeliveryState#FOUND_DONE}). */
    private Claim found;

    // calls: the store calls of this delivery, made without blocking when it runs on an event loop; previousKey: the
    // key in its other form while the key storage is changing, or null
    /**
     * The key in a form that does not change with its storage, which a {@code @ThroughOutbox} processor's output id is
     * derived from; {@code null} for other methods.
     */
    private ScopedKey outputKey;

    Delivery(DeliveryContext context, KeyCalls calls, MethodPlan plan, String channel, ScopedKey key,
            Metadata metadata, Arrival arrival, ScopedKey previousKey) {
        this.context = context;
        this.target = new DeliveryTarget(plan, plan.policy(channel), channel, key, metadata, System.nanoTime());
        this.arrival = arrival;
        this.record = new KeyRecord(context, calls, key, previousKey, target.policy(), arrival.facts());
    }

    void outputKey(ScopedKey key) {
        this.outputKey = key;
    }

    /**
     * @return the key a {@code @ThroughOutbox} processor's output id is derived from: the same for every delivery of
     *         the key, whatever its storage
     */
    ScopedKey outputKey() {
        return outputKey;
    }

    /**
     * The key was confirmed {@code age} ago (the store says, or this process's confirmed-keys cache), for a message with
     * those facts: a duplicate, reported with where it comes from and its age.
     *
     * @throws PayloadMismatchException when its payload differs and such duplicates are dead-lettered
     */
    void confirmedEarlier(MessageFacts seen, Duration age) {
        PayloadMatch payload = arrival.compare(seen);
        context.listener().duplicate(this, arrival.originOf(seen), payload, age, seen);
        IdempotencyException mismatch = end(Verdict.duplicate(target, payload, seen, arrival.facts()));
        if (mismatch != null) {
            throw mismatch;
        }
    }

    /**
     * Claims the key on a lease. Completes with whether the handler runs (holding the lease if so), or fails with the
     * outcome when it must not run now. A dead owner's claim is taken over once its attempt is counted; while the key
     * storage changes, the key's other form answers for it.
     */
    public Uni<Boolean> claim() {
        // one operator for a new key: each costs a context capture per message
        return ask(record.claim(), claim -> claim.result() == ClaimResult.TAKEN_OVER ? countLostAttempt() : held(claim));
    }

    // A claim this delivery may hold, the key's other form looked at while the storage changes.
    private Uni<Boolean> held(Claim claim) {
        return claim.result() == ClaimResult.NEW && record.changingForm()
                ? record.underEarlierForm(claim).onFailure().transform(e -> storeFailed("look up the earlier form of", e))
                        .chain(this::claimedOnLease)
                : claimedOnLease(claim);
    }

    private synchronized Uni<Boolean> claimedOnLease(Claim claim) {
        if (state.ended()) {
            return record.giveUp(claim); // abandoned while its claim was on its way
        }
        boolean run = claimed(claim, DeliveryState.CLAIMED);
        if (run) {
            record.hold();
        }
        return state == DeliveryState.FOUND_DONE
                ? onceDurable(() -> confirmedEarlier(found.seen(), found.age())).replaceWith(false)
                : now(run);
    }

    /**
     * Writes the key, as confirmed, in the handler's active transaction; then {@code then} with whether the handler runs
     * (not for a duplicate, nor in state {@link DeliveryState#EXPIRED}: a dead owner's claim, taken over on a lease).
     */
    <T> Uni<T> claimInTransaction(TransactionKeys transaction, Function<Boolean, Uni<T>> then) {
        return ask(record.claimInTransaction(transaction), claim -> then.apply(claimedInTransaction(claim)));
    }

    private boolean claimedInTransaction(Claim claim) {
        if (claim.result() == ClaimResult.EXPIRED) {
            state = DeliveryState.EXPIRED;
            return false;
        }
        boolean run = claimed(claim, DeliveryState.WRITTEN_IN_TRANSACTION);
        // with asynchronous-commit the transaction commits without its WAL flush: succeeded() waits for it
        committedAsynchronously = run && target.policy().asynchronousCommit();
        return run;
    }

    // The store's answer to a claim, reported, then what it means: a failing store is a store failure, never counted.
    private <T> Uni<T> ask(Uni<Claim> claim, Function<Claim, Uni<T>> then) {
        long start = System.nanoTime();
        return claim.onItemOrFailure().transformToUni((answer, e) -> {
            if (e != null) {
                return failure(storeFailed("claim", e));
            }
            context.listener().claimAnswered(this, System.nanoTime() - start);
            return then.apply(answer);
        });
    }

    /**
     * @return whether this delivery's transitions, started now on this thread, settle before their subscription returns
     *         (its store answers on the calling thread: {@link SameThread})
     */
    boolean answersOnCallingThread() {
        return record.answersOnCallingThread();
    }

    /** @return whether the key storage is changing: only a lease-mode claim looks at the key's other form */
    boolean changingKeyForm() {
        return record.changingForm();
    }

    // The owner died or stalled: its attempt counts, so a message that kills its process meets the end of its budget.
    private Uni<Boolean> countLostAttempt() {
        context.listener().tookOver(this);
        LeaseExpiredException lost = new LeaseExpiredException(key());
        return record.countFailure(lost.getMessage())
                .onFailure().transform(e -> storeFailed("count the lost attempt of", e))
                .chain(counted -> {
                    Verdict spent = Verdict.lostAttemptCounted(target, counted, lost);
                    return spent != null ? failure(end(spent)) : ask(record.claim(), this::held);
                });
    }

    private boolean claimed(Claim claim, DeliveryState held) {
        switch (claim.result()) {
            case DONE -> {
                // Whichever channel reads it: the commit that confirmed it may be another channel's asynchronous one,
                // or this channel's in an instance that still has asynchronous-commit during a rollout.
                if (context.store().commitsAsynchronously()) {
                    found = claim; // visible, maybe not durable yet: a duplicate once a flush passed it (onceDurable)
                    state = DeliveryState.FOUND_DONE;
                } else {
                    confirmedEarlier(claim.seen(), claim.age());
                }
                return false;
            }
            case BUSY -> throw end(Verdict.busy(target, claim, context));
            case DEAD_LETTERED -> throw end(Verdict.deadLetteredBefore(key(), claim));
            default -> {
                failedBefore = claim.attempts();
                state = held;
                context.holders().hold(key(), this);
                return true;
            }
        }
    }

    /** Confirms a lease-mode claim in the handler's transaction; {@code false} when taken over: it rolls back. */
    Uni<Boolean> confirmInTransaction(TransactionKeys transaction) {
        return record.confirmInTransaction(transaction).onItemOrFailure().transformToUni((confirmed, e) -> {
            if (e != null) {
                return failure(e instanceof HandlerTransactionAbortedException ? e : storeFailed("confirm", e));
            }
            state = confirmed ? DeliveryState.CONFIRMED_IN_TRANSACTION : DeliveryState.LOST_IN_TRANSACTION;
            return now(confirmed);
        });
    }

    /** The handler's transaction ended, as the transaction manager saw it: a rollback is a failed attempt. */
    void transactionEnded(boolean committed) {
        if (!committed && state.heldByTransaction()) {
            state = DeliveryState.ROLLED_BACK;
        }
    }

    /** A processor returned: its key is confirmed once its output is acknowledged downstream; renewed meanwhile. */
    void awaitOutputAck() {
        if (state == DeliveryState.CLAIMED) {
            state = DeliveryState.AWAITING_OUTPUT_ACK;
        }
    }

    /**
     * The handler returned and its transaction (if any) committed, or a processor's output was acknowledged: confirms
     * the key unless it is already. Completes once settled; fails when that is a failure (a rollback, a lost claim).
     */
    public synchronized Uni<Void> succeeded() {
        return switch (state) {
            case WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION -> committedAsynchronously ? onceDurable(this::handled)
                    : settled(this::handled);
            case CLAIMED, AWAITING_OUTPUT_ACK -> confirmOnItsOwn();
            case FOUND_DONE -> onceDurable(() -> confirmedEarlier(found.seen(), found.age()));
            case LOST_IN_TRANSACTION -> failure(end(DeliveryState.CLAIM_LOST, new ClaimLostException(key()), null));
            case ROLLED_BACK -> countFailure(new HandlerRolledBackException(key())).chain(Unis::failure);
            default -> answer != null && state != DeliveryState.HANDLED ? failure(answer) : SETTLED;
        };
    }

    // Acked once the WAL is flushed past the commit that justifies the ack (the handler's asynchronous one, or the one
    // that confirmed a key found in a store that commits asynchronously); until then neither acked nor counted: see
    // FOUND_DONE.
    // A flush that succeeds after a crash of the database server proves nothing about a commit the crash lost: the key
    // must still be there, confirmed, after it. Else the work went with the key, and the message is delivered again.
    private Uni<Void> onceDurable(Runnable then) {
        return record.awaitConfirmedDurably().onItemOrFailure().transformToUni((confirmed, e) -> e != null
                ? failure(storeFailed("learn whether the commit is durable, of", e))
                : Boolean.TRUE.equals(confirmed) ? settled(then)
                        : failure(storeFailed("keep the commit that confirmed", Verdict.commitLost())));
    }

    private Uni<Void> confirmOnItsOwn() {
        record.letGo();
        return record.confirm().onItemOrFailure().transform((confirmed, e) -> {
            synchronized (this) {
                if (!state.ended()) { // else abandoned meanwhile: it ended once, as that
                    Verdict notHandled = Verdict.confirmedOnItsOwn(confirmed, e);
                    if (notHandled == null) {
                        handled();
                    } else {
                        end(notHandled);
                    }
                }
            }
            return null;
        });
    }

    private void handled() {
        record.letGo();
        end(DeliveryState.HANDLED, null, null);
        if (context.confirmedKeys() != null) {
            context.confirmedKeys().add(key(), target.policy().retention(), arrival.facts());
        }
    }

    /**
     * The handler failed (it threw, its stage failed, its transaction could not commit, or its output was nacked):
     * counts the attempt, unless the failure is an outcome of this extension. Completes with what to nack with.
     */
    public synchronized Uni<IdempotencyException> failed(Throwable failure) {
        record.letGo();
        if (failure instanceof StoreUnavailableException unavailable && !state.ended()) {
            return now(end(DeliveryState.STORE_FAILED, unavailable, unavailable.getCause())); // never counted
        }
        return switch (state) {
            case KEYED, CLAIMED, WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION, AWAITING_OUTPUT_ACK, ROLLED_BACK,
                    EXPIRED ->
                countFailure(failure);
            case LOST_IN_TRANSACTION -> now(end(DeliveryState.CLAIM_LOST, new ClaimLostException(key()), null));
            case STORE_FAILED -> record.releaseQuietly().replaceWith(answer);
            default -> now(answer != null ? answer
                    : failure instanceof IdempotencyException e ? e
                            : Verdict.notCounted(target, failedBefore, context.requeueDelay(), failure));
        };
    }

    /** The handler's result was cancelled: its outcome is unknown, its claim left to run out with its lease. */
    public synchronized void abandoned() {
        if (!state.ended()) {
            record.letGo();
            end(DeliveryState.ABANDONED, null, null);
        }
    }

    private Uni<IdempotencyException> countFailure(Throwable failure) {
        return record.countFailure(String.valueOf(failure)).onItemOrFailure().transformToUni((counted, e) -> {
            synchronized (this) {
                if (state.ended()) { // abandoned meanwhile: it ended once, as that
                    return now(answer != null ? answer
                            : Verdict.notCounted(target, failedBefore, context.requeueDelay(), failure));
                }
                if (e != null) {
                    // never decided on a guess: a store that cannot count never spends the budget
                    IdempotencyException unavailable = storeFailed("count a failed attempt of", e);
                    return record.releaseQuietly().replaceWith(unavailable);
                }
                return now(end(Verdict.afterCounted(target, counted, failure, failedBefore, context.requeueDelay())));
            }
        });
    }

    private StoreUnavailableException storeFailed(String operation, Throwable e) {
        return end(DeliveryState.STORE_FAILED, new StoreUnavailableException(operation, key(), e), e);
    }

    private IdempotencyException end(Verdict verdict) {
        return end(verdict.state(), verdict.answer(), verdict.cause());
    }

    // A delivery ends once: a later end (an answer that arrives after it was abandoned) changes and reports nothing.
    private synchronized <E extends IdempotencyException> E end(DeliveryState ended, E result, Throwable cause) {
        if (state.ended()) {
            return result;
        }
        answer = result;
        state = ended;
        context.holders().release(key(), this);
        context.listener().ended(this, cause);
        return result;
    }

    @Override
    public DeliveryTarget target() {
        return target;
    }

    @Override
    public DuplicateOrigin duplicateOrigin() {
        return arrival.origin();
    }

    @Override
    public DeliveryState state() {
        return state;
    }

    @Override
    public IdempotencyException answer() {
        return answer;
    }

    /** @return how many attempts of this key failed before this delivery */
    public int failedBefore() {
        return failedBefore;
    }

    @Override
    public String toString() {
        return "Delivery[" + key() + ", " + state + "]";
    }
}
