package io.quarkiverse.idempotency.runtime.micrometer;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.IdempotencyMetrics;
import io.quarkiverse.idempotency.runtime.Outcome;

/**
 * Micrometer meters of the extension:
 * <ul>
 * <li>{@code idempotency.deliveries} (counter; tags {@code channel}, {@code outcome}): the duplicate rate is the one
 * worth graphing; a spike is a redelivery storm, usually consumers killed before they ack;</li>
 * <li>{@code idempotency.claim} (timer): how long a claim takes;</li>
 * <li>{@code idempotency.purged} (counter): expired keys deleted;</li>
 * <li>{@code idempotency.claims.oldest.age} (gauge, seconds): the age of the oldest unconfirmed claim; a growing value
 * is a handler that dies or hangs.</li>
 * </ul>
 * Counters are created once per channel and outcome, so a delivery costs a map lookup and an increment.
 */
@Singleton
public class MicrometerIdempotencyMetrics implements IdempotencyMetrics {

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Counter[]> deliveries = new ConcurrentHashMap<>();
    private final Timer claims;
    private final Counter purged;

    @Inject
    public MicrometerIdempotencyMetrics(MeterRegistry registry, IdempotencyStore store) {
        this.registry = registry;
        this.claims = Timer.builder("idempotency.claim").description("Time to claim a key in the idempotency store")
                .register(registry);
        this.purged = Counter.builder("idempotency.purged").description("Expired idempotency keys deleted")
                .register(registry);
        Gauge.builder("idempotency.claims.oldest.age", store,
                s -> s.oldestClaimAge().map(d -> d.toMillis() / 1000.0).orElse(0.0))
                .description("Age in seconds of the oldest unconfirmed claim").baseUnit("seconds")
                .register(registry);
    }

    @Override
    public void delivery(String channel, Outcome outcome) {
        deliveries.computeIfAbsent(channel, this::countersOf)[outcome.ordinal()].increment();
    }

    @Override
    public void claimLatency(long nanos) {
        claims.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void purged(long rows) {
        purged.increment(rows);
    }

    private Counter[] countersOf(String channel) {
        Outcome[] outcomes = Outcome.values();
        Counter[] counters = new Counter[outcomes.length];
        for (Outcome outcome : outcomes) {
            counters[outcome.ordinal()] = Counter.builder("idempotency.deliveries")
                    .description("Deliveries to @Idempotent consumers, by outcome")
                    .tag("channel", channel).tag("outcome", outcome.tag()).register(registry);
        }
        return counters;
    }
}
