package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * The keys this process confirmed, remembered for their retention, so that a duplicate of one is acked without a
 * round trip to the store. Safe because a confirmed key is final: nothing but expiry removes it from the store, and
 * an entry here expires no later than the key does there. Bounded: past its size, the oldest half is dropped.
 */
final class ConfirmedKeys {

    private final int maxSize;
    private final ConcurrentHashMap<ScopedKey, Confirmed> entries = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicInteger adds = new java.util.concurrent.atomic.AtomicInteger();

    ConfirmedKeys(int maxSize) {
        this.maxSize = maxSize;
    }

    /**
     * A key this process confirmed: when it expires from here, when it was confirmed ({@link System#nanoTime()}), and
     * the facts of the message that wrote it.
     */
    record Confirmed(long expiry, long confirmedAt, MessageFacts facts) {

        /** @return how long ago the key was confirmed */
        Duration age() {
            return Duration.ofNanos(System.nanoTime() - confirmedAt);
        }
    }

    /** @return the key's entry, or {@code null} when this process did not confirm it (or it expired) */
    Confirmed get(ScopedKey key) {
        Confirmed entry = entries.get(key);
        if (entry == null) {
            return null;
        }
        if (entry.expiry() - System.nanoTime() > 0) {
            return entry;
        }
        entries.remove(key, entry);
        return null;
    }

    void add(ScopedKey key, Duration retention, MessageFacts facts) {
        long now = System.nanoTime();
        entries.put(key, new Confirmed(now + retention.toNanos(), now, facts));
        // counting a concurrent map sums its counter cells: once every 64 additions is enough to stay bounded
        if ((adds.incrementAndGet() & 63) == 0 && entries.size() > maxSize) {
            evict();
        }
    }

    private synchronized void evict() {
        if (entries.size() <= maxSize) {
            return;
        }
        // Drop the entries that expire soonest: roughly the oldest confirmations.
        long[] all = entries.values().stream().mapToLong(Confirmed::expiry).sorted().toArray();
        long cutoff = all[all.length / 2];
        for (Iterator<Confirmed> it = entries.values().iterator(); it.hasNext();) {
            if (it.next().expiry() <= cutoff) {
                it.remove();
            }
        }
    }
}
