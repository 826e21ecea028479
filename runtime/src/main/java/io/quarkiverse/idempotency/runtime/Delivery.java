package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.function.Supplier;

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

    Delivery(DeliveryContext context, MethodPlan plan, String channel, ScopedKey key, Metadata metadata) {
        this(context, plan, channel, key, metadata, Arrival.UNKNOWN, null);
    }

    Delivery(DeliveryContext context, MethodPlan plan, String channel, ScopedKey key, Metadata metadata,
            Arrival arrival, ScopedKey previousKey) {
        this.context = context;
        this.target = new DeliveryTarget(plan, plan.policy(channel), channel, key, metadata);
        this.key = key;
        this.arrival = arrival;
        this.previousKey = previousKey;
        this.record = new KeyRecord(context, key, target.policy(), arrival.facts());
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

    /** Claims the key on a lease; answers whether the handler runs, throws the outcome when it must not run now. */
    public boolean claim() {
        Claim claim = ask(record::claim);
        if (claim.result() == ClaimResult.TAKEN_OVER) {
            context.listener().tookOver(this);
            claim = countLostAttempt();
        }
        if (claim.result() == ClaimResult.NEW && previousKey != null) {
            claim = underPreviousForm(claim);
        }
        return claimedOnLease(claim);
    }

    // The lease-mode claim's answer, the previous form looked at: whether the handler runs, holding the lease if so.
    private boolean claimedOnLease(Claim claim) {
        boolean run = claimed(claim, DeliveryState.CLAIMED);
        if (run) {
            record.hold();
        }
        return run;
    }

    /**
     * {@link #claim()}, for a method on the event loop: each store call made without blocking. Completes with whether
     * the handler runs, or fails with the outcome when it must not run now.
     */
    Uni<Boolean> claimWithoutBlocking() {
        ReactiveKeys keys;
        try {
            keys = context.nonBlocking().keys();
        } catch (IllegalStateException e) {
            return Uni.createFrom().failure(storeFailed("claim", e));
        }
        return askWithoutBlocking(keys).chain(claim -> {
            if (claim.result() == ClaimResult.TAKEN_OVER) {
                context.listener().tookOver(this);
                return countLostAttempt(keys);
            }
            return Uni.createFrom().item(claim);
        }).chain(claim -> claim.result() == ClaimResult.NEW && previousKey != null ? underPreviousForm(keys, claim)
                : Uni.createFrom().item(claim))
                .chain(claim -> {
                    synchronized (this) {
                        if (state.ended()) {
                            // abandoned while its claim was on its way: a claim it got is given up, not held
                            boolean held = claim.result() == ClaimResult.NEW || claim.result() == ClaimResult.TAKEN_OVER;
                            return held ? record.release(keys).replaceWith(false) : Uni.createFrom().item(false);
                        }
                        return Uni.createFrom().item(claimedOnLease(claim));
                    }
                });
    }

    /** @return whether this delivery's store calls can be made without blocking ({@link #claimWithoutBlocking()}) */
    boolean callsWithoutBlocking() {
        return context.nonBlocking().unavailable() == null;
    }

    private Uni<Claim> askWithoutBlocking(ReactiveKeys keys) {
        long start = System.nanoTime();
        return record.claim(keys).onItemOrFailure().transformToUni((claim, e) -> {
            if (e != null) {
                return Uni.createFrom().failure(storeFailed("claim", e));
            }
            context.listener().claimAnswered(this, System.nanoTime() - start);
            return Uni.createFrom().item(claim);
        });
    }

    /**
     * Writes the key, as confirmed, in the handler's active transaction. Answers whether the handler runs ({@code false}
     * for a duplicate, or in state {@link DeliveryState#EXPIRED}: a dead owner's claim to take over on a lease first).
     */
    boolean claimInTransaction() {
        return claimedInTransaction(ask(record::claimInTransaction));
    }

    /**
     * {@link #claimInTransaction()}, for a claim that a reactive handler's session answered, asked at {@code start}
     * ({@link System#nanoTime()}).
     */
    boolean answeredInTransaction(Claim claim, long start) {
        context.listener().claimAnswered(this, System.nanoTime() - start);
        return claimedInTransaction(claim);
    }

    /** A statement of a reactive handler's session that writes the key failed: the store failed, never counted. */
    StoreUnavailableException sessionFailed(String operation, Throwable e) {
        return storeFailed(operation, e);
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

    private Claim ask(Supplier<Claim> store) {
        long start = System.nanoTime();
        Claim claim;
        try {
            claim = store.get();
        } catch (RuntimeException e) {
            throw storeFailed("claim", e);
        }
        context.listener().claimAnswered(this, System.nanoTime() - start);
        return claim;
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
    private Claim underPreviousForm(Claim claimed) {
        Claim earlier;
        try {
            earlier = context.store().peek(previousKey);
        } catch (RuntimeException e) {
            record.release();
            throw storeFailed("look up the earlier form of", e);
        }
        switch (earlier.result()) {
            case DONE -> {
                try {
                    record.confirm();
                } catch (RuntimeException e) {
                    // still a duplicate; the next one looks up the earlier form again
                }
                return earlier;
            }
            case DEAD_LETTERED, BUSY -> {
                record.release();
                return earlier;
            }
            default -> {
                return claimed;
            }
        }
    }

    // underPreviousForm(claimed), without blocking.
    private Uni<Claim> underPreviousForm(ReactiveKeys keys, Claim claimed) {
        return keys.peek(previousKey).onItemOrFailure().<Claim> transformToUni((earlier, e) -> {
            if (e != null) {
                return record.release(keys).onItem().transformToUni(
                        ignored -> Uni.createFrom().<Claim> failure(storeFailed("look up the earlier form of", e)));
            }
            return switch (earlier.result()) {
                // still a duplicate if the confirm fails; the next one looks up the earlier form again
                case DONE -> record.confirm(keys).onFailure().recoverWithItem(false).replaceWith(earlier);
                case DEAD_LETTERED, BUSY -> record.release(keys).replaceWith(earlier);
                default -> Uni.createFrom().item(claimed);
            };
        });
    }

    // The owner died or stalled: its attempt counts, so a message that kills its process meets the end of its budget.
    private Claim countLostAttempt() {
        LeaseExpiredException lost = new LeaseExpiredException(key);
        int counted;
        try {
            counted = record.countFailure(lost.getMessage());
        } catch (RuntimeException e) {
            throw storeFailed("count the lost attempt of", e);
        }
        lostAttemptCounted(counted, lost);
        return ask(record::claim);
    }

    // countLostAttempt(), without blocking.
    private Uni<Claim> countLostAttempt(ReactiveKeys keys) {
        LeaseExpiredException lost = new LeaseExpiredException(key);
        return record.countFailure(keys, lost.getMessage())
                .onFailure().transform(e -> storeFailed("count the lost attempt of", e))
                .chain(counted -> {
                    lostAttemptCounted(counted, lost);
                    return askWithoutBlocking(keys);
                });
    }

    private void lostAttemptCounted(int counted, LeaseExpiredException lost) {
        if (counted > 0 && target.policy().retry().spentBy(counted)) {
            throw end(DeliveryState.DEAD_LETTERED, new AttemptsExhaustedException(key, counted, lost), lost);
        }
    }

    private boolean claimed(Claim claim, DeliveryState held) {
        switch (claim.result()) {
            case DONE -> {
                duplicate(claim.seen(), claim.age());
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
     * Answers {@code false} when the claim was taken over: the caller rolls the transaction back.
     */
    boolean confirmInTransaction() {
        boolean confirmed;
        try {
            confirmed = record.confirmInTransaction();
        } catch (HandlerTransactionAbortedException e) {
            throw e;
        } catch (RuntimeException e) {
            throw storeFailed("confirm", e);
        }
        return confirmedInTransaction(confirmed);
    }

    /**
     * A reactive handler's session confirmed the lease-mode claim ({@code true}), or found it taken over: the caller
     * rolls the transaction back.
     */
    boolean confirmedInTransaction(boolean confirmed) {
        state = confirmed ? DeliveryState.CONFIRMED_IN_TRANSACTION : DeliveryState.LOST_IN_TRANSACTION;
        return confirmed;
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
     * Confirms the key unless it is confirmed already; throws when that still is a failure (a rollback, a lost claim).
     */
    public synchronized void succeeded() {
        switch (state) {
            case WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION -> {
                if (committedAsynchronously) {
                    awaitDurable();
                }
                handled();
            }
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

    // Not acked, never counted: the commit may be lost with the store's server, so the message comes back; its
    // redelivery finds the key if the commit was kept, and runs the work again if it was not.
    private void awaitDurable() {
        try {
            record.awaitDurable();
        } catch (RuntimeException e) {
            record.letGo();
            throw storeFailed("learn whether the commit is durable, of", e);
        }
    }

    private void confirmOnItsOwn() {
        record.letGo();
        boolean confirmed;
        try {
            confirmed = record.confirm();
        } catch (RuntimeException e) {
            end(DeliveryState.UNCONFIRMED, null, e);
            return;
        }
        confirmedOnItsOwn(confirmed);
    }

    private void confirmedOnItsOwn(boolean confirmed) {
        if (confirmed) {
            handled();
        } else {
            end(DeliveryState.CLAIM_LOST, null, null); // the work happened: the message is acked all the same
        }
    }

    /**
     * {@link #succeeded()}, for a method on the event loop: its lease-mode claim is confirmed without blocking. Completes
     * once the outcome is settled, or fails as {@link #succeeded()} throws.
     */
    Uni<Void> succeededWithoutBlocking() {
        if (state == DeliveryState.AWAITING_OUTPUT_ACK || state == DeliveryState.ROLLED_BACK || committedAsynchronously) {
            // store calls of shapes the build keeps off the event loop: made on a worker thread all the same
            return Blocking.call(() -> {
                succeeded();
                return null;
            });
        }
        if (state != DeliveryState.CLAIMED) {
            return Uni.createFrom().item(() -> {
                succeeded(); // no store call: the delivery ended, or its key is confirmed
                return null;
            });
        }
        record.letGo();
        return record.confirm(context.nonBlocking().keys()).onItemOrFailure().transform((confirmed, e) -> {
            synchronized (this) {
                if (state.ended()) {
                    return null; // abandoned meanwhile: it ended once, as that
                }
                if (e != null) {
                    end(DeliveryState.UNCONFIRMED, null, e);
                } else {
                    confirmedOnItsOwn(confirmed);
                }
            }
            return null;
        });
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
     * counts the attempt, unless the failure is an outcome of this extension, and answers what to nack with.
     */
    public synchronized IdempotencyException failed(Throwable failure) {
        record.letGo();
        if (failure instanceof StoreUnavailableException unavailable && !state.ended()) {
            return end(DeliveryState.STORE_FAILED, unavailable, unavailable.getCause()); // never counted
        }
        return switch (state) {
            case KEYED, CLAIMED, WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION, AWAITING_OUTPUT_ACK, ROLLED_BACK,
                    EXPIRED ->
                countFailure(failure);
            case LOST_IN_TRANSACTION -> end(DeliveryState.CLAIM_LOST, new ClaimLostException(key), null);
            case STORE_FAILED -> {
                record.releaseQuietly();
                yield answer;
            }
            default -> answer != null ? answer : failure instanceof IdempotencyException e ? e : notCounted(failure);
        };
    }

    /**
     * {@link #failed}, for a method on the event loop: the attempt is counted without blocking. Completes with what to
     * nack with.
     */
    Uni<IdempotencyException> failedWithoutBlocking(Throwable failure) {
        ReactiveKeys keys = context.nonBlocking().keys();
        synchronized (this) {
            record.letGo();
            if (failure instanceof StoreUnavailableException unavailable && !state.ended()) {
                return Uni.createFrom().item(end(DeliveryState.STORE_FAILED, unavailable, unavailable.getCause()));
            }
            switch (state) {
                case KEYED, CLAIMED, WRITTEN_IN_TRANSACTION, CONFIRMED_IN_TRANSACTION, AWAITING_OUTPUT_ACK,
                        ROLLED_BACK, EXPIRED:
                    break;
                case STORE_FAILED:
                    return record.releaseQuietly(keys).replaceWith(answer);
                default:
                    return Uni.createFrom().item(failed(failure)); // no store call
            }
        }
        return record.countFailure(keys, String.valueOf(failure)).onItemOrFailure().transformToUni((counted, e) -> {
            synchronized (this) {
                if (state.ended()) {
                    // abandoned meanwhile: it ended once, as that
                    return Uni.createFrom().item(answer != null ? answer : notCounted(failure));
                }
                if (e != null) {
                    StoreUnavailableException unavailable = storeFailed("count a failed attempt of", e);
                    return record.releaseQuietly(keys).replaceWith(unavailable);
                }
                return Uni.createFrom().item(failureCounted(counted, failure));
            }
        });
    }

    /** The handler's result was cancelled: its outcome is unknown, so its claim is left to run out with its lease. */
    public synchronized void abandoned() {
        if (!state.ended()) {
            record.letGo();
            end(DeliveryState.ABANDONED, null, null);
        }
    }

    private IdempotencyException countFailure(Throwable failure) {
        int counted;
        try {
            counted = record.countFailure(String.valueOf(failure));
        } catch (RuntimeException e) {
            // never decided on a guess: a store that cannot count never spends the budget
            StoreUnavailableException unavailable = storeFailed("count a failed attempt of", e);
            record.releaseQuietly();
            return unavailable;
        }
        return failureCounted(counted, failure);
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

    private <E extends IdempotencyException> E end(DeliveryState ended, E result, Throwable cause) {
        answer = result;
        state = ended;
        context.holders().release(key, this);
        context.listener().ended(this, cause);
        return result;
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
