package io.quarkiverse.idempotency.runtime;

import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.KeyMissingException;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.StoreUnavailableException;

/**
 * The semantics of one idempotent delivery, shared by the interceptors and the programmatic form: compute the key,
 * claim it, and after the handler confirm or forget it. Every method may block on the store.
 */
@Singleton
public class IdempotencyGuard {

    private static final Logger LOG = Logger.getLogger(IdempotencyGuard.class);

    private final IdempotencyStore store;
    private final ClaimRenewer renewer;
    private final MessageIdKey messageIds;
    private final IdempotencyMetrics metrics;
    private final ConfirmedKeys confirmedKeys;
    private final boolean claimInTransaction;

    @Inject
    public IdempotencyGuard(IdempotencyStore store, IdempotentMethods methods, MessageIdKey messageIds,
            IdempotencyMetrics metrics, IdempotencyConfig config) {
        this.store = store;
        this.renewer = new ClaimRenewer(store, methods.shortestClaimTimeout());
        this.messageIds = messageIds;
        this.metrics = metrics;
        // The memory store answers as fast as the cache would, and tests clear it between cases: no cache in front.
        this.confirmedKeys = config.confirmedKeysCacheSize() > 0 && !(store instanceof InMemoryIdempotencyStore)
                ? new ConfirmedKeys(config.confirmedKeysCacheSize())
                : null;
        this.claimInTransaction = store.supportsClaimInTransaction();
    }

    /** @return the broker's message id, or {@code null} */
    public String messageId(Metadata metadata) {
        return messageIds.key(null, metadata);
    }

    /**
     * @return whether this method's key is claimed inside its own transaction (the opt-in mode), by
     *         {@link #claimInTransaction}, rather than by {@link #begin} before it
     */
    public boolean claimsInTransaction(MethodPlan plan) {
        return claimInTransaction && plan.claimInTransaction() && plan.transactional();
    }

    /**
     * Computes the key of a message and claims it.
     *
     * @param plan the method's plan
     * @param channel the channel that delivered the message (the default scope)
     * @param payload the payload
     * @param metadata the metadata
     * @return the delivery; when its claim is {@link ClaimResult#claimed()}, the caller must run the handler and then
     *         call {@link #succeeded} or {@link #failed}
     * @throws KeyMissingException when the key function finds no key or fails
     * @throws StoreUnavailableException when the store fails
     */
    public Delivery begin(MethodPlan plan, String channel, Object payload, Metadata metadata) {
        ScopedKey scoped = keyOf(plan, channel, payload, metadata);
        if (confirmedKeys != null && confirmedKeys.contains(scoped)) {
            metrics.delivery(channel, Outcome.DUPLICATE);
            return new Delivery(plan, channel, scoped, ClaimResult.DONE, 0);
        }
        long start = System.nanoTime();
        ClaimResult claim;
        try {
            claim = store.claim(scoped.scope(), scoped.key(), plan.retention(), plan.claimTimeout());
        } catch (RuntimeException e) {
            throw storeFailed(plan, channel, scoped, e);
        }
        long now = System.nanoTime();
        metrics.claimLatency(now - start);
        recordClaim(plan, channel, scoped, claim);
        Delivery delivery = new Delivery(plan, channel, scoped, claim, now);
        if (claim.claimed()) {
            renewer.track(delivery);
        }
        return delivery;
    }

    /**
     * Computes the key of a message whose claim is made inside the handler's transaction
     * ({@link #claimInTransaction}); answers a duplicate this process confirmed right away.
     */
    public Delivery prepareInTransaction(MethodPlan plan, String channel, Object payload, Metadata metadata) {
        ScopedKey scoped = keyOf(plan, channel, payload, metadata);
        if (confirmedKeys != null && confirmedKeys.contains(scoped)) {
            metrics.delivery(channel, Outcome.DUPLICATE);
            return new Delivery(plan, channel, scoped, ClaimResult.DONE, 0);
        }
        return new Delivery(plan, channel, scoped, null, 0);
    }

    /**
     * Claims the key, as confirmed, inside the handler's active transaction (the opt-in mode).
     *
     * @return whether the handler must run
     * @throws DeliveryInProgressException when a live claim of the other mode holds the key
     * @throws StoreUnavailableException when the store fails
     */
    public boolean claimInTransaction(Delivery delivery) {
        ScopedKey key = delivery.key();
        MethodPlan plan = delivery.plan();
        long start = System.nanoTime();
        ClaimResult claim;
        try {
            claim = store.claimConfirmedInTransaction(key.scope(), key.key(), plan.retention(), plan.claimTimeout());
        } catch (RuntimeException e) {
            throw storeFailed(plan, delivery.channel(), key, e);
        }
        metrics.claimLatency(System.nanoTime() - start);
        recordClaim(plan, delivery.channel(), key, claim);
        delivery.claimed(claim);
        if (claim == ClaimResult.BUSY) {
            throw new DeliveryInProgressException(key);
        }
        if (claim.claimed()) {
            delivery.confirmedInTransaction();
        }
        return claim.claimed();
    }

    /**
     * Confirms the key inside the handler's active transaction (database stores only).
     *
     * @return false when the claim was taken over: the caller must roll the transaction back
     * @throws StoreUnavailableException when the store fails (the caller's transaction then rolls back)
     */
    public boolean confirmInTransaction(Delivery delivery) {
        ScopedKey key = delivery.key();
        boolean confirmed;
        try {
            confirmed = store.confirm(key.scope(), key.key(), delivery.plan().retention());
        } catch (RuntimeException e) {
            throw new StoreUnavailableException(key, e);
        }
        if (confirmed) {
            delivery.confirmedInTransaction();
        } else {
            delivery.claimLost();
        }
        return confirmed;
    }

    /** @return whether confirm can join the handler's transaction */
    public boolean storeJoinsTransactions() {
        return store.joinsTransactions();
    }

    /**
     * The handler returned normally (or was skipped as a duplicate in the opt-in mode): confirm the key, unless it was
     * confirmed in the handler's committed transaction.
     *
     * @throws ClaimLostException when the transaction was rolled back because the claim had been taken over
     * @throws HandlerRolledBackException when the handler's transaction rolled back without an exception
     */
    public void succeeded(Delivery delivery) {
        renewer.untrack(delivery);
        if (delivery.claim() == ClaimResult.DONE || !delivery.settle()) {
            return;
        }
        ScopedKey key = delivery.key();
        if (delivery.isClaimLost()) {
            throw new ClaimLostException(key);
        }
        if (delivery.isRolledBack()) {
            metrics.delivery(delivery.channel(), Outcome.FAILED);
            if (!delivery.claimsInTransaction()) {
                forget(delivery);
            }
            throw new HandlerRolledBackException(key);
        }
        if (delivery.isConfirmedInTransaction()) {
            remember(delivery);
            return;
        }
        try {
            if (store.confirm(key.scope(), key.key(), delivery.plan().retention())) {
                remember(delivery);
            } else {
                LOG.warnf("The claim on key '%s' was no longer this worker's when %s finished: taken over (the"
                        + " handler outlived the claim timeout: raise it above the slowest handler), or lost in a"
                        + " database crash (with asynchronous-claim-commit). Its work is done and the message is"
                        + " acknowledged, but the key is not confirmed: another delivery may repeat the work", key,
                        delivery.plan().description());
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "Could not confirm key '%s' after %s succeeded. The work happened, so the message is"
                    + " acknowledged; the claim will expire and a redelivery after the claim timeout would run it again",
                    key, delivery.plan().description());
        }
    }

    /**
     * The handler's result was cancelled: stop renewing the claim, which then expires (a redelivery waits for the
     * claim timeout). Nothing is known of the outcome, so the claim is neither confirmed nor forgotten.
     */
    public void abandoned(Delivery delivery) {
        renewer.untrack(delivery);
    }

    /**
     * The handler failed: forget this worker's claim, so that the retry really runs.
     */
    public void failed(Delivery delivery, Throwable failure) {
        renewer.untrack(delivery);
        if (!delivery.settle()) {
            return;
        }
        if (!(failure instanceof IdempotencyException)) {
            // busy and store outcomes met inside the transaction were counted as such already
            metrics.delivery(delivery.channel(), Outcome.FAILED);
        }
        // A claim made in the handler's transaction rolled back with it; a lost claim is another worker's now.
        if (!delivery.isClaimLost() && !delivery.claimsInTransaction()) {
            forget(delivery);
        }
    }

    private ScopedKey keyOf(MethodPlan plan, String channel, Object payload, Metadata metadata) {
        String scope = plan.scope() != null ? plan.scope() : channel;
        String key;
        try {
            key = plan.keyFunction().key(payload, metadata);
        } catch (RuntimeException e) {
            metrics.delivery(channel, Outcome.KEY_MISSING);
            throw keyMissing(plan, metadata, "its key function failed: " + e, e);
        }
        if (key == null || key.isBlank()) {
            metrics.delivery(channel, Outcome.KEY_MISSING);
            throw keyMissing(plan, metadata, "its key function found no key", null);
        }
        return new ScopedKey(scope, key);
    }

    private void recordClaim(MethodPlan plan, String channel, ScopedKey key, ClaimResult claim) {
        metrics.delivery(channel, switch (claim) {
            case NEW -> Outcome.FIRST;
            case TAKEN_OVER -> Outcome.TAKEOVER;
            case DONE -> Outcome.DUPLICATE;
            case BUSY -> Outcome.BUSY;
        });
        if (claim == ClaimResult.TAKEN_OVER) {
            LOG.infof("Took over the stale claim on key '%s' for %s (its previous owner did not finish within %s)",
                    key, plan.description(), plan.claimTimeout());
        }
    }

    private StoreUnavailableException storeFailed(MethodPlan plan, String channel, ScopedKey key, RuntimeException e) {
        metrics.delivery(channel, Outcome.STORE_ERROR);
        LOG.warnf("The idempotency store failed to claim key '%s' for %s; the message will be retried: %s", key,
                plan.description(), e.toString());
        return new StoreUnavailableException(key, e);
    }

    private void remember(Delivery delivery) {
        if (confirmedKeys != null) {
            confirmedKeys.add(delivery.key(), delivery.plan().retention());
        }
    }

    private void forget(Delivery delivery) {
        ScopedKey key = delivery.key();
        try {
            store.forget(key.scope(), key.key());
        } catch (RuntimeException e) {
            LOG.errorf(e, "Could not forget the claim on key '%s' after %s failed; a redelivery will wait for the"
                    + " claim timeout (%s) before it runs", key, delivery.plan().description(),
                    delivery.plan().claimTimeout());
        }
    }

    private KeyMissingException keyMissing(MethodPlan plan, Metadata metadata, String why, Throwable cause) {
        String id = messageId(metadata);
        String message = "Rejecting message " + (id == null ? "without a message id" : "with id '" + id + "'")
                + " of " + plan.description() + ": " + why + "; it is dead-lettered, not retried";
        LOG.warn(message);
        return new KeyMissingException(message, cause);
    }

    @PreDestroy
    void close() {
        renewer.close();
    }
}
