package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.idempotency.ScopedKey;

/**
 * The keys this process confirmed, remembered for their retention, so that a duplicate of one is acked without a
 * round trip to the store. Safe because a confirmed key is final: nothing but expiry removes it from the store, and
 * an entry here expires no later than the key does there. Bounded: past its size, the oldest half is dropped.
 */
final class ConfirmedKeys {

    private final int maxSize;
    private final ConcurrentHashMap<ScopedKey, Long> expiries = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicInteger adds = new java.util.concurrent.atomic.AtomicInteger();

    ConfirmedKeys(int maxSize) {
        this.maxSize = maxSize;
    }

    boolean contains(ScopedKey key) {
        Long expiry = expiries.get(key);
        if (expiry == null) {
            return false;
        }
        if (expiry - System.nanoTime() > 0) {
            return true;
        }
        expiries.remove(key, expiry);
        return false;
    }

    void add(ScopedKey key, Duration retention) {
        expiries.put(key, System.nanoTime() + retention.toNanos());
        // counting a concurrent map sums its counter cells: once every 64 additions is enough to stay bounded
        if ((adds.incrementAndGet() & 63) == 0 && expiries.size() > maxSize) {
            evict();
        }
    }

    private synchronized void evict() {
        if (expiries.size() <= maxSize) {
            return;
        }
        // Drop the entries that expire soonest: roughly the oldest confirmations.
        long[] all = expiries.values().stream().mapToLong(Long::longValue).sorted().toArray();
        long cutoff = all[all.length / 2];
        for (Iterator<Long> it = expiries.values().iterator(); it.hasNext();) {
            if (it.next() <= cutoff) {
                it.remove();
            }
        }
    }
}
