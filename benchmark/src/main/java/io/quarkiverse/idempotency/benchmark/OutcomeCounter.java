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

    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();

    @Override
    public void delivery(String channel, Outcome outcome) {
        counts.computeIfAbsent(channel + "/" + outcome.tag(), k -> new AtomicLong()).incrementAndGet();
    }

    @Override
    public void claimLatency(long nanos) {
    }

    @Override
    public void purged(long rows) {
    }

    long count(String channel, Outcome outcome) {
        AtomicLong n = counts.get(channel + "/" + outcome.tag());
        return n == null ? 0 : n.get();
    }
}
