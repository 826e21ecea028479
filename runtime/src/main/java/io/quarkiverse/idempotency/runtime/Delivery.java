package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.function.Function;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
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

    /** Where the outer interceptor leaves the delivery for the inner one, in the invocation context data. */
    static final String CONTEXT_KEY = Delivery.class.getName();
    /** Where it leaves the delivery of a {@code @WithTransaction} method for the reactive inner one. */
    static final String REACTIVE_CONTEXT_KEY = CONTEXT_KEY + ".reactive";

    private final DeliveryContext context;
    private final DeliveryTarget target;
    private final ScopedKey key;
    private volatile DeliveryState state = DeliveryState.KEYED;
    private volatile IdempotencyException answer;
    private final KeyRecord record;
    private final Arrival arrival;
    /** The key in its other form while the key storage is changing (its earlier record may be there), or null. */
    private final ScopedKey previousKey;
    private int failedBefore;
    /** Whether the handler's transaction commits asynchronously: its message is acked once the commit is durable. */
    private boolean committedAsynchronously;
    /** The key's record found confirmed by a commit that may not be durable yet ({@link DeliveryState#FOUND_DONE}). */
    private Claim found;

    /**
     * @param calls the store calls of this delivery, made without blocking when it runs on an event loop
     */
    Delivery(DeliveryContext context, KeyCalls calls, MethodPlan plan, String channel, ScopedKey key,
            Metadata metadata, Arrival arrival, ScopedKey previousKey) {
        this.context = context;
        this.target = new DeliveryTarget(plan, plan.policy(channel), channel, key, metadata);
        this.key = key;
        this.arrival = arrival;
        this.previousKey = previousKey;
        this.record = new KeyRecord(context, calls, key, target.policy(), arrival.facts());
    }

    /**
     * This process confirmed the key earlier (the confirmed-keys cache), {@code age} ago, for a message with those
     * facts: a duplicate, no claim needed.
     *
     * @throws PayloadMismatchException when its payload differs and such duplicates are dead-lettered
     */
    void confirmedEarlier(MessageFacts seen, Duration age) {
        duplicate(seen, age);
    }

    /**
     * The key was confirmed: a duplicate, acked, unless its payload differs from the one the key was written with and
     * the policy dead-letters such messages. Reported with where it comes from and its age either way.
     */
    private void duplicate(MessageFacts seen, Duration age) {
        PayloadMatch payload = arrival.compare(seen);
        context.listener().duplicate(this, arrival.originOf(seen), payload, age, seen);
        if (payload == PayloadMatch.MISMATCH && target.policy().payloadMismatch() == PayloadMismatch.DEAD_LETTER) {
            throw end(DeliveryState.PAYLOAD_MISMATCH, new PayloadMismatchException(key, seen.messageId(),
                    arrival.facts().messageId()), null);
        }
        end(DeliveryState.DUPLICATE, null, null);
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
        return claim.result() == ClaimResult.NEW && previousKey != null
                ? underPreviousForm(claim).chain(this::claimedOnLease)
                : claimedOnLease(claim);
    }

    // The lease-mode claim's answer, the previous form looked at: whether the handler runs, holding the lease if so.
    private synchronized Uni<Boolean> claimedOnLease(Claim claim) {
        if (state.ended()) {
            // abandoned while its claim was on its way: a claim it got is given up, not held
            boolean held = claim.result() == ClaimResult.NEW || claim.result() == ClaimResult.TAKEN_OVER;
            return held ? record.release().replaceWith(false) : now(false);
        }
        boolean run = claimed(claim, DeliveryState.CLAIMED);
        if (run) {
            record.hold();
        }
        return state == DeliveryState.FOUND_DONE ? onceDurable(this::foundDuplicate).replaceWith(false) : now(run);
    }

    /**
     * Writes the key, as confirmed, in the handler's active transaction. Completes with whether the handler runs
     * ({@code false} for a duplicate, or in state {@link DeliveryState#EXPIRED}: a dead owner's claim to take over on a
     * lease first).
     */
    Uni<Boolean> claimInTransaction(TransactionKeys transaction) {
        return claimInTransaction(transaction, Delivery::now);
    }

    /** {@link #claimInTransaction(TransactionKeys)}, then {@code then} with whether the handler runs. */
    <T> Uni<T> claimInTransaction(TransactionKeys transaction, Function<Boolean, Uni<T>> then) {
        return ask(record.claimInTransaction(transaction), claim -> then.apply(claimedInTransaction(claim)));
    }

    private boolean claimedInTransaction(Claim claim) {
        if (claim.result() == ClaimResult.EXPIRED) {
            state = DeliveryState.EXPIRED;
            return false;
        }
        boolean run = claimed(claim, DeliveryState.WRITTEN_IN_TRANSACTION);
        // the key is written: with asynchronous-commit, the transaction commits without waiting for its WAL flush, and
        // succeeded() waits for the commit to be durable before the message is acked
        committedAsynchronously = run && target.policy().asynchronousCommit();
        return run;
    }

    // The store's answer to a claim, reported, then what it means: a failing store is a store failure, never counted.
    private <T> Uni<T> ask(Uni<Claim> claim, Function<Claim, Uni<T>> then) {
        long start = System.nanoTime();
        return claim.onItemOrFailure().transformToUni((answer, e) -> {
            if (e != null) {
                return Uni.createFrom().failure(storeFailed("claim", e));
            }
            context.listener().claimAnswered(this, System.nanoTime() - start);
            return then.apply(answer);
        });
    }

    /**
     * @return whether the key storage is changing: the key's record may still be under its other form, which only a
     *         lease-mode claim looks at ({@link #claim()}), so an in-transaction method claims on a lease first
     */
    boolean changingKeyForm() {
        return previousKey != null;
    }

    // The key is new in its current form, but the storage changed within a retention: a record of the key in the other
    // form answers for it. A confirmed one makes this a duplicate, and this claim is confirmed, so that the current form
    // answers from now on; a dead-lettered or held one keeps its answer, and this claim is given up.
    private Uni<Claim> underPreviousForm(Claim claimed) {
        return record.peek(previousKey).onItemOrFailure().transformToUni((earlier, e) -> {
            if (e != null) {
                return record.release().chain(() -> Uni.createFrom().failure(
                        storeFailed("look up the earlier form of", e)));
            }
            return switch (earlier.result()) {
                // still a duplicate if the confirm fails; the next one looks up the earlier form again
                case DONE -> record.confirm().onFailure().recoverWithItem(false).replaceWith(earlier);
                case DEAD_LETTERED, BUSY -> record.release().replaceWith(earlier);
                default -> now(claimed);
            };
        });
    }

    // The owner died or stalled: its attempt counts, so a message that kills its process meets the end of its budget.
    private Uni<Boolean> countLostAttempt() {
        context.listener().tookOver(this);
        LeaseExpiredException lost = new LeaseExpiredException(key);
        return record.countFailure(lost.getMessage())
                .onFailure().transform(e -> storeFailed("count the lost attempt of", e))
                .chain(counted -> {
                    if (counted > 0 && target.policy().retry().spentBy(counted)) {
                        throw end(DeliveryState.DEAD_LETTERED, new AttemptsExhaustedException(key, counted, lost), lost);
                    }
                    return ask(record.claim(), this::held);
                });
    }

    private boolean claimed(Claim claim, DeliveryState held) {
        switch (claim.result()) {
            case DONE -> {
                if (target.policy().asynchronousCommit()) {
                    // visible, maybe not durable yet: a duplicate once a flush passed it (onceDurable)
                    found = claim;
                    state = DeliveryState.FOUND_DONE;
                } else {
                    duplicate(claim.seen(), claim.age());
                }
                return false;
            }
            case BUSY -> throw end(DeliveryState.BUSY, new DeliveryInProgressException(key,
                    target.policy().busyDelay(claim.busyFor(), context.requeueDelay()),
                    context.holders().whenReleased(key)), null);
            case DEAD_LETTERED -> {
                RecordedFailure reason = new RecordedFailure(claim.reason());
                throw end(DeliveryState.DEAD_LETTERED, new AttemptsExhaustedException(key, claim.attempts(), reason),
                        reason);
            }
            default -> {
                failedBefore = claim.attempts();
                state = held;
                context.holders().hold(key, this);
                return true;
            }
        }
    }

    /**
     * Confirms a lease-mode claim in the handler's active transaction, so that the work and the key commit together.
     * Completes with {@code false} when the claim was taken over: the caller rolls the transaction back.
     */
    Uni<Boolean> confirmInTransaction(TransactionKeys transaction) {
        return record.confirmInTransaction(transaction).onItemOrFailure().transformToUni((confirmed, e) -> {
            if (e != null) {
                return Uni.createFrom().failure(e instanceof HandlerTransactionAbortedException ? e
                        : storeFailed("confirm", e));
            }
            state = confirmed ? DeliveryState.CONFIRMED_IN_TRANSACTION : DeliveryState.LOST_IN_TRANSACTION;
            return now(confirmed);
        });
    }

    /** @return this delivery's claim token */
    String token() {
        return record.token();
    }

    /** @return the facts of this delivery's message, kept with its key */
    MessageFacts facts() {
        return arrival.facts();
    }

    /** @return how long the key is kept */
    Duration retention() {
        return target.policy().retention();
    }

    /** The handler's transaction ended, as the transaction manager saw it: a rollback is a failed attempt. */
    void transactionEnded(boolean committed) {
        if (!committed && (state == DeliveryState.WRITTEN_IN_TRANSACTION || state == DeliveryState.CLAIMED
                || state == DeliveryState.CONFIRMED_IN_TRANSACTION)) {
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
     * The handler returned and its transaction (if any) committed; for a processor, its output was acknowledged.
     * Confirms the key unless it is confirmed already. Completes once the outcome is settled; fails when that still is
     * a failure (a rollback, a lost claim).
     */
    public synchronized Uni<Void> succeeded() {
        switch (state) {
            case WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION -> {
                if (committedAsynchronously) {
                    return onceDurable(this::handled);
                }
                handled();
                return Uni.createFrom().voidItem();
            }
            case CLAIMED, AWAITING_OUTPUT_ACK -> {
                return confirmOnItsOwn();
            }
            case FOUND_DONE -> {
                return onceDurable(this::foundDuplicate); // found in the handler's transaction, waited for once it ended
            }
            case LOST_IN_TRANSACTION -> {
                return Uni.createFrom().failure(end(DeliveryState.CLAIM_LOST, new ClaimLostException(key), null));
            }
            case ROLLED_BACK -> {
                return countFailure(new HandlerRolledBackException(key)).chain(e -> Uni.createFrom().failure(e));
            }
            default -> {
                return answer != null && state != DeliveryState.HANDLED ? Uni.createFrom().failure(answer)
                        : Uni.createFrom().voidItem();
            }
        }
    }

    // Acked only once the WAL is flushed past the commit that justifies the ack: the handler's own asynchronous commit
    // (then handled), or the one that confirmed a key found on such a channel (then a duplicate). Until then, not acked
    // and never counted: a crash of the store's server before the flush loses that commit, with its work, so the
    // message must come back; its redelivery finds the key if the commit was kept, and runs the work if it was not.
    private Uni<Void> onceDurable(Runnable then) {
        return record.awaitDurable().onItemOrFailure().transformToUni((ignored, e) -> {
            if (e != null) {
                return Uni.createFrom().failure(storeFailed("learn whether the commit is durable, of", e));
            }
            then.run();
            return Uni.createFrom().voidItem();
        });
    }

    private Uni<Void> confirmOnItsOwn() {
        record.letGo();
        return record.confirm().onItemOrFailure().transform((confirmed, e) -> {
            synchronized (this) {
                if (state.ended()) {
                    return null; // abandoned meanwhile: it ended once, as that
                }
                if (e != null) {
                    end(DeliveryState.UNCONFIRMED, null, e);
                } else if (confirmed) {
                    handled();
                } else {
                    end(DeliveryState.CLAIM_LOST, null, null); // the work happened: the message is acked all the same
                }
            }
            return null;
        });
    }

    private void foundDuplicate() {
        duplicate(found.seen(), found.age());
    }

    private void handled() {
        record.letGo();
        end(DeliveryState.HANDLED, null, null);
        if (context.confirmedKeys() != null) {
            context.confirmedKeys().add(key, target.policy().retention(), arrival.facts());
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
            case LOST_IN_TRANSACTION -> now(end(DeliveryState.CLAIM_LOST, new ClaimLostException(key), null));
            case STORE_FAILED -> record.releaseQuietly().replaceWith(answer);
            default -> now(answer != null ? answer : failure instanceof IdempotencyException e ? e : notCounted(failure));
        };
    }

    /** The handler's result was cancelled: its outcome is unknown, so its claim is left to run out with its lease. */
    public synchronized void abandoned() {
        if (!state.ended()) {
            record.letGo();
            end(DeliveryState.ABANDONED, null, null);
        }
    }

    private Uni<IdempotencyException> countFailure(Throwable failure) {
        return record.countFailure(String.valueOf(failure)).onItemOrFailure().transformToUni((counted, e) -> {
            synchronized (this) {
                if (state.ended()) {
                    // abandoned meanwhile: it ended once, as that
                    return now(answer != null ? answer : notCounted(failure));
                }
                if (e != null) {
                    // never decided on a guess: a store that cannot count never spends the budget
                    IdempotencyException unavailable = storeFailed("count a failed attempt of", e);
                    return record.releaseQuietly().replaceWith(unavailable);
                }
                return now(failureCounted(counted, failure));
            }
        });
    }

    private IdempotencyException failureCounted(int counted, Throwable failure) {
        if (counted == 0) {
            // The key's record is not this delivery's any more: another delivery holds it, and its outcome decides.
            return end(DeliveryState.CLAIM_LOST, notCounted(failure), failure);
        }
        IdempotencyException outcome = target.policy().retry().afterFailure(key, counted, failure);
        return end(outcome.requeue() ? DeliveryState.RETRYING : DeliveryState.DEAD_LETTERED, outcome, failure);
    }

    private HandlerFailedException notCounted(Throwable failure) {
        return new HandlerFailedException(key, failedBefore + 1, target.policy().retry().maxAttempts(), context.requeueDelay(),
                failure);
    }

    private StoreUnavailableException storeFailed(String operation, Throwable e) {
        return end(DeliveryState.STORE_FAILED, new StoreUnavailableException(operation, key, e), e);
    }

    // A delivery ends once: a later end (an answer that arrives after it was abandoned) changes and reports nothing.
    private synchronized <E extends IdempotencyException> E end(DeliveryState ended, E result, Throwable cause) {
        if (state.ended()) {
            return result;
        }
        answer = result;
        state = ended;
        context.holders().release(key, this);
        context.listener().ended(this, cause);
        return result;
    }

    private static <T> Uni<T> now(T item) {
        return Uni.createFrom().item(item);
    }

    @Override
    public DeliveryTarget target() {
        return target;
    }

    @Override
    public ScopedKey key() {
        return key;
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
        return "Delivery[" + key + ", " + state + "]";
    }
}
