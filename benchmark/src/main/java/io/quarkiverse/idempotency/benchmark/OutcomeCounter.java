package io.quarkiverse.idempotency.benchmark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.runtime.IdempotencyMetrics;
import io.quarkiverse.idempotency.runtime.Outcome;

/** Counts deliveries by channel and outcome, so the benchmark sees duplicates, which run no handler. */
@Singleton
public class OutcomeCounter implements IdempotencyMetrics {

    // per channel, one counter per outcome: a delivery costs a map lookup and an increment, as with Micrometer
    private final Map<String, AtomicLong[]> counts = new ConcurrentHashMap<>();

    @Override
    public void delivery(String channel, Outcome outcome) {
        counts.computeIfAbsent(channel, c -> newCounters())[outcome.ordinal()].incrementAndGet();
    }

    private static AtomicLong[] newCounters() {
        AtomicLong[] counters = new AtomicLong[Outcome.values().length];
        for (int i = 0; i < counters.length; i++) {
            counters[i] = new AtomicLong();
        }
        return counters;
    }

    @Override
    public void claimLatency(String channel, long nanos) {
    }

    @Override
    public void takeover(String channel) {
    }

    @Override
    public void purged(long rows) {
    }

    long count(String channel, Outcome outcome) {
        AtomicLong[] n = counts.get(channel);
        return n == null ? 0 : n[outcome.ordinal()].get();
    }
}
