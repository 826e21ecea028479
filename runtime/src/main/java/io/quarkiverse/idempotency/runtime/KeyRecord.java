package io.quarkiverse.idempotency.runtime;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.smallrye.mutiny.Uni;

/**
 * One delivery's key as the store holds it: every call the delivery makes on the store, with the key, the claim's
 * token (one per delivery, so that a delivery whose claim was taken over changes nothing) and the method's settings,
 * and the lease that is renewed while the handler runs. The store's failures propagate: the delivery decides what they
 * mean.
 */
final class KeyRecord {

    private final IdempotencyStore store;
    private final ScopedKey key;
    private final DeliveryPolicy policy;
    private final DeliveryContext context;
    private final MessageFacts facts;
    private String token;
    /** Set on the thread that claims, read by the one that ends the delivery (an event loop's callbacks may differ). */
    private volatile Lease lease;

    KeyRecord(DeliveryContext context, ScopedKey key, DeliveryPolicy policy, MessageFacts facts) {
        this.store = context.store();
        this.context = context;
        this.key = key;
        this.policy = policy;
        this.facts = facts;
    }

    Claim claim() {
        return store.claim(key, token(), policy.lease(), policy.retention(), facts);
    }

    Claim claimInTransaction() {
        return store.claimInTransaction(key, token(), policy.retention(), policy.asynchronousCommit(), facts);
    }

    void awaitDurable() {
        store.awaitDurable();
    }

    /** @return the failed attempts counted, this one included; 0 when the record is not this delivery's to count on */
    int countFailure(String failure) {
        return store.recordFailure(key, token(), failure, policy.retry().maxAttempts(), policy.retention());
    }

    boolean confirm() {
        reportLapse();
        return store.confirm(key, token(), policy.retention());
    }

    boolean confirmInTransaction() {
        reportLapse();
        return store.confirmInTransaction(key, token(), policy.retention());
    }

    // a handler that outlived its lease unrenewed knows it before it confirms
    private void reportLapse() {
        if (lease != null) {
            lease.reportIfLapsed();
        }
    }

    // The same calls, made without blocking (a method on the event loop).

    Uni<Claim> claim(ReactiveKeys keys) {
        return keys.claim(key, token(), policy.lease(), policy.retention(), facts);
    }

    Uni<Integer> countFailure(ReactiveKeys keys, String failure) {
        return keys.recordFailure(key, token(), failure, policy.retry().maxAttempts(), policy.retention());
    }

    Uni<Boolean> confirm(ReactiveKeys keys) {
        reportLapse();
        return keys.confirm(key, token(), policy.retention());
    }

    /** {@link #release()} without blocking: completes once the store answered, and never fails. */
    Uni<Void> release(ReactiveKeys keys) {
        return keys.release(key, token()).onFailure().recoverWithNull().replaceWithVoid();
    }

    /** {@link #releaseQuietly()} without blocking: completes once the store answered, and never fails. */
    Uni<Void> releaseQuietly(ReactiveKeys keys) {
        return lease != null ? release(keys) : Uni.createFrom().voidItem();
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

    /** Gives this delivery's claim up without counting an attempt, as far as the store answers: else it runs out. */
    void release() {
        try {
            store.release(key, token());
        } catch (RuntimeException ignored) {
            // the store is failing; the claim runs out with its lease
        }
    }

    /** Gives a held claim up without counting an attempt, as far as the store answers: else it runs out. */
    void releaseQuietly() {
        if (lease != null) {
            release();
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
