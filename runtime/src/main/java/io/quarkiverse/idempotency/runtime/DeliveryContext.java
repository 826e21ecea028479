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
 * @param nonBlocking the store's calls without blocking, for methods on the event loop
 */
record DeliveryContext(IdempotencyStore store, DeliveryListener listener, LeaseRenewer renewer,
        ConfirmedKeys confirmedKeys, ClaimTokens tokens, Duration requeueDelay, LocalHolders holders,
        NonBlockingStore nonBlocking) {

    DeliveryContext(IdempotencyStore store, DeliveryListener listener, LeaseRenewer renewer,
            ConfirmedKeys confirmedKeys, ClaimTokens tokens, Duration requeueDelay, LocalHolders holders) {
        this(store, listener, renewer, confirmedKeys, tokens, requeueDelay, holders,
                new NonBlockingStore(store, java.util.List.of()));
    }
}
