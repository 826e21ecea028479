package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.IdempotencyStore;

/**
 * What every delivery of this application shares: built once by {@link Deliveries}.
 *
 * @param store where keys live
 * @param listener what a delivery reports its transitions to (metrics and logs)
 * @param renewer renews the leases of running handlers' claims
 * @param confirmedKeys the keys this process confirmed, or {@code null} when that cache is off
 * @param tokens this process's worker id and the claims' tokens
 * @param requeueDelay how long a busy or store-failed message waits before it is redelivered
 * @param holders the keys held by deliveries of this process right now
 * @param nonBlocking the store's calls without blocking, for deliveries on an event loop
 * @param ownCalls the store's own calls: on the calling thread when they never block, else off an event loop
 */
record DeliveryContext(IdempotencyStore store, DeliveryListener listener, LeaseRenewer renewer,
        ConfirmedKeys confirmedKeys, ClaimTokens tokens, Duration requeueDelay, LocalHolders holders,
        NonBlockingStore nonBlocking, KeyCalls ownCalls) {

    DeliveryContext(IdempotencyStore store, DeliveryListener listener, LeaseRenewer renewer,
            ConfirmedKeys confirmedKeys, ClaimTokens tokens, Duration requeueDelay, LocalHolders holders,
            NonBlockingStore nonBlocking) {
        this(store, listener, renewer, confirmedKeys, tokens, requeueDelay, holders, nonBlocking,
                store.neverBlocks() ? KeyCalls.onCallingThread(store) : KeyCalls.offloading(store));
    }

    /**
     * The one place that picks where a delivery's store calls run.
     *
     * @param onEventLoop whether the delivery starts on an event loop
     * @return the store's calls without blocking for a delivery on an event loop when the store has them; else the
     *         store's own calls, on the calling thread when they never block or it is a worker thread, on the worker
     *         pool when asked from an event loop
     */
    KeyCalls calls(boolean onEventLoop) {
        KeyCalls withoutBlocking = onEventLoop && !store.neverBlocks() ? nonBlocking.keysIfAny() : null;
        return withoutBlocking != null ? withoutBlocking : ownCalls;
    }
}
