package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.idempotency.ScopedKey;

/**
 * The keys held by deliveries of this process right now, so that a message whose key one of them holds comes back as
 * soon as that delivery ends rather than after the whole requeue delay: a burst of duplicates of one hot key then
 * holds the channel's prefetch for as long as the first delivery runs, not for a fixed delay. Per delivery it costs
 * one map insertion and one removal; a waiter costs a future.
 */
final class LocalHolders {

    private final ConcurrentHashMap<ScopedKey, Holder> holders = new ConcurrentHashMap<>();

    /** A delivery holds the key. */
    void hold(ScopedKey key, Object delivery) {
        holders.put(key, new Holder(delivery));
    }

    /** The delivery no longer holds the key: whoever waits for it is told. */
    void release(ScopedKey key, Object delivery) {
        Holder holder = holders.get(key);
        if (holder != null && holder.delivery == delivery && holders.remove(key, holder)) {
            holder.released();
        }
    }

    /** @return completes when the delivery of this process holding the key ends; {@code null} when none holds it */
    CompletionStage<Void> whenReleased(ScopedKey key) {
        Holder holder = holders.get(key);
        return holder == null ? null : holder.ended();
    }

    private static final class Holder {
        final Object delivery;
        private CompletableFuture<Void> ended;
        private boolean released;

        Holder(Object delivery) {
            this.delivery = delivery;
        }

        synchronized void released() {
            released = true;
            if (ended != null) {
                ended.complete(null);
            }
        }

        synchronized CompletableFuture<Void> ended() {
            if (ended == null) {
                ended = new CompletableFuture<>();
                if (released) {
                    ended.complete(null);
                }
            }
            return ended;
        }
    }
}
