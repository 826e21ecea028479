package io.quarkiverse.idempotency.runtime;

import java.util.List;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.smallrye.mutiny.Uni;

/**
 * One delivery's key as the store holds it: every call the delivery makes on the store, with the key, the claim's
 * token (one per delivery, so that a delivery whose claim was taken over changes nothing) and the method's settings,
 * and the lease that is renewed while the handler runs. Each call answers a {@code Uni} through the delivery's
 * {@link KeyCalls} (or its transaction's {@link TransactionKeys}); the store's failures propagate: the delivery
 * decides what they mean.
 */
final class KeyRecord {

    private final KeyCalls calls;
    private final ScopedKey key;
    private final DeliveryPolicy policy;
    private final DeliveryContext context;
    private final MessageFacts facts;
    /** The key in its other form while the key storage is changing (its earlier record may be there), or null. */
    private final ScopedKey previousKey;
    private String token;
    /** Set on the thread that claims, read by the one that ends the delivery (an event loop's callbacks may differ). */
    private volatile Lease lease;

    KeyRecord(DeliveryContext context, KeyCalls calls, ScopedKey key, ScopedKey previousKey, DeliveryPolicy policy,
            MessageFacts facts) {
        this.calls = calls;
        this.context = context;
        this.key = key;
        this.previousKey = previousKey;
        this.policy = policy;
        this.facts = facts;
    }

    Uni<Claim> claim() {
        return calls.claim(key, token(), policy.lease(), policy.retention(), facts);
    }

    Uni<Claim> claimInTransaction(TransactionKeys transaction) {
        return transaction.claim(key, token(), policy.retention(), policy.asynchronousCommit(), facts);
    }

    /** @return whether this record's store calls made now are answered on this thread ({@link SameThread}) */
    boolean answersOnCallingThread() {
        return calls.answersOnCallingThread();
    }

    /** @return whether the key storage is changing: the key's record may still be under its other form */
    boolean changingForm() {
        return previousKey != null;
    }

    /**
     * The key was claimed new in its current form while the storage changes: a record of the key in the other form
     * answers for it. A confirmed one makes this a duplicate, and this claim is confirmed, so that the current form
     * answers from now on; a dead-lettered or held one keeps its answer, and this claim is given up. A look-up that
     * fails gives the claim up too, and fails.
     *
     * @return the answer that stands for the claim
     */
    Uni<Claim> underEarlierForm(Claim claimed) {
        return calls.peek(previousKey).onItemOrFailure().transformToUni((earlier, e) -> {
            if (e != null) {
                return release().chain(() -> Uni.createFrom().failure(e));
            }
            return switch (earlier.result()) {
                // still a duplicate if the confirm fails; the next one looks up the earlier form again
                case DONE -> confirm().onFailure().recoverWithItem(false).replaceWith(earlier);
                case DEAD_LETTERED, BUSY -> release().replaceWith(earlier);
                default -> Uni.createFrom().item(claimed);
            };
        });
    }

    /** @return the failed attempts counted, this one included; 0 when the record is not this delivery's to count on */
    Uni<Integer> countFailure(String failure) {
        return calls.recordFailure(key, token(), failure, policy.retry().maxAttempts(), policy.retention());
    }

    /**
     * @return once every commit visible now is durable, whether the key is then confirmed (in either form while the
     *         storage changes): {@code false} when the commit that confirmed it was lost in a crash of the database
     */
    Uni<Boolean> awaitConfirmedDurably() {
        return calls.awaitConfirmedDurably(previousKey == null ? List.of(key) : List.of(key, previousKey));
    }

    Uni<Boolean> confirm() {
        reportLapse();
        return calls.confirm(key, token(), policy.retention());
    }

    Uni<Boolean> confirmInTransaction(TransactionKeys transaction) {
        reportLapse();
        return transaction.confirm(key, token(), policy.retention());
    }

    // a handler that outlived its lease unrenewed knows it before it confirms
    private void reportLapse() {
        if (lease != null) {
            lease.reportIfLapsed();
        }
    }

    /** Gives this delivery's claim up without counting an attempt, as far as the store answers: else it runs out. */
    Uni<Void> release() {
        return calls.release(key, token()).onItemOrFailure().transform((released, e) -> null);
    }

    /** @return {@code false} once a claim that came back for a delivery that ended meanwhile is given up, not held */
    Uni<Boolean> giveUp(Claim claim) {
        boolean held = claim.result() == ClaimResult.NEW || claim.result() == ClaimResult.TAKEN_OVER;
        return held ? release().replaceWith(false) : Uni.createFrom().item(false);
    }

    /** {@link #release()}, of a held claim only. */
    Uni<Void> releaseQuietly() {
        return lease != null ? release() : Uni.createFrom().voidItem();
    }

    /** Starts renewing the claim's lease while the handler runs. */
    void hold() {
        lease = new Lease(key, token(), policy.lease(), policy.retention());
        context.renewer().track(lease);
    }

    /** Stops renewing the lease: the delivery is ending. */
    void letGo() {
        if (lease != null) {
            context.renewer().untrack(lease);
        }
    }

    /** @return the claim's lease, or {@code null} when the key is written in the handler's transaction */
    Lease lease() {
        return lease;
    }

    String token() {
        if (token == null) {
            token = context.tokens().next();
        }
        return token;
    }
}
