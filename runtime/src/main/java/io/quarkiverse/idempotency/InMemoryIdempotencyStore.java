package io.quarkiverse.idempotency;

import java.time.Duration;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * An {@link IdempotencyStore} in this process's memory, with a sliding window: a key is remembered for its retention
 * and then forgotten.
 * <p>
 * Correct for one process only, so right for tests and dev mode and wrong for production, where two consumer
 * processes each with their own memory is exactly the case idempotency exists for. It is not transactional: a key
 * is confirmed after the handler's transaction committed.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

    private static final int MIN_SWEEP_INTERVAL = 1024;

    private final ConcurrentHashMap<ScopedKey, Entry> entries;
    private final AtomicInteger claimsSinceSweep;
    private volatile int sizeAtLastSweep;
    private final String worker;
    private final LongSupplier nanoClock;

    /**
     * @param worker the id of this worker, which fences confirm and forget
     */
    public InMemoryIdempotencyStore(String worker) {
        this(worker, System::nanoTime);
    }

    /**
     * @param worker the id of this worker, which fences confirm and forget
     * @param nanoClock a monotonic clock in nanoseconds (tests move time forward with it)
     */
    public InMemoryIdempotencyStore(String worker, LongSupplier nanoClock) {
        this(worker, nanoClock, new ConcurrentHashMap<>(), new AtomicInteger());
    }

    private InMemoryIdempotencyStore(String worker, LongSupplier nanoClock, ConcurrentHashMap<ScopedKey, Entry> entries,
            AtomicInteger claimsSinceSweep) {
        this.worker = Objects.requireNonNull(worker, "worker");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.entries = entries;
        this.claimsSinceSweep = claimsSinceSweep;
    }

    /**
     * @return a view of this store acting as another worker on the same entries, as a second process would
     */
    public InMemoryIdempotencyStore asWorker(String otherWorker) {
        return new InMemoryIdempotencyStore(otherWorker, nanoClock, entries, claimsSinceSweep);
    }

    @Override
    public ClaimResult claim(String scope, String key, Duration retention, Duration claimTimeout) {
        long now = nanoClock.getAsLong();
        ClaimResult[] result = new ClaimResult[1];
        entries.compute(new ScopedKey(scope, key), (k, existing) -> {
            if (existing == null || existing.expiresAt - now <= 0) {
                result[0] = ClaimResult.NEW;
                return new Entry(false, worker, now, now + retention.toNanos());
            }
            if (existing.confirmed) {
                result[0] = ClaimResult.DONE;
                return existing;
            }
            if (now - existing.renewedAt >= claimTimeout.toNanos()) {
                result[0] = ClaimResult.TAKEN_OVER;
                return new Entry(false, worker, now, now + retention.toNanos());
            }
            result[0] = ClaimResult.BUSY;
            return existing;
        });
        if (result[0] == ClaimResult.NEW) {
            maybeSweep();
        }
        return result[0];
    }

    @Override
    public boolean confirm(String scope, String key, Duration retention) {
        long now = nanoClock.getAsLong();
        boolean[] done = new boolean[1];
        entries.computeIfPresent(new ScopedKey(scope, key), (k, e) -> {
            if (e.confirmed || !e.owner.equals(worker)) {
                return e;
            }
            done[0] = true;
            return new Entry(true, e.owner, now, now + retention.toNanos());
        });
        return done[0];
    }

    @Override
    public boolean forget(String scope, String key) {
        boolean[] done = new boolean[1];
        entries.computeIfPresent(new ScopedKey(scope, key), (k, e) -> {
            if (e.confirmed || !e.owner.equals(worker)) {
                return e;
            }
            done[0] = true;
            return null;
        });
        return done[0];
    }

    @Override
    public void renew(Collection<ScopedKey> keys) {
        long now = nanoClock.getAsLong();
        for (ScopedKey k : keys) {
            entries.computeIfPresent(k, (ignored, e) -> e.confirmed || !e.owner.equals(worker) ? e
                    : new Entry(false, e.owner, now, e.expiresAt));
        }
    }

    @Override
    public int purgeExpired(int limit) {
        long now = nanoClock.getAsLong();
        int removed = 0;
        for (Iterator<Map.Entry<ScopedKey, Entry>> it = entries.entrySet().iterator(); it.hasNext() && removed < limit;) {
            Map.Entry<ScopedKey, Entry> e = it.next();
            if (e.getValue().expiresAt - now <= 0 && entries.remove(e.getKey(), e.getValue())) {
                removed++;
            }
        }
        return removed;
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        long now = nanoClock.getAsLong();
        long oldest = Long.MAX_VALUE;
        boolean found = false;
        for (Entry e : entries.values()) {
            if (!e.confirmed && e.expiresAt - now > 0 && (!found || e.renewedAt - oldest < 0)) {
                oldest = e.renewedAt;
                found = true;
            }
        }
        return found ? Optional.of(Duration.ofNanos(now - oldest)) : Optional.empty();
    }

    /** @return the number of keys held, expired ones not yet swept included */
    public int size() {
        return entries.size();
    }

    /** Forgets every key. */
    public void clear() {
        entries.clear();
    }

    // The window slides without a timer: after as many new claims as the store held at the last sweep (at least
    // MIN_SWEEP_INTERVAL), expired keys are swept, which keeps the cost per claim constant however large it grows.
    private void maybeSweep() {
        int since = claimsSinceSweep.incrementAndGet();
        if (since >= Math.max(MIN_SWEEP_INTERVAL, sizeAtLastSweep) && claimsSinceSweep.compareAndSet(since, 0)) {
            purgeExpired(Integer.MAX_VALUE);
            sizeAtLastSweep = entries.size();
        }
    }

    private record Entry(boolean confirmed, String owner, long renewedAt, long expiresAt) {
    }
}
