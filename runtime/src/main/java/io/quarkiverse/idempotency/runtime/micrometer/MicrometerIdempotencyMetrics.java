package io.quarkiverse.idempotency.runtime.micrometer;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.DuplicateOrigin;
import io.quarkiverse.idempotency.runtime.IdempotencyMetrics;
import io.quarkiverse.idempotency.runtime.Outcome;
import io.quarkiverse.idempotency.runtime.PayloadMatch;

/**
 * Micrometer meters of the extension:
 * <ul>
 * <li>{@code idempotency.deliveries} (counter; tags {@code channel}, {@code outcome}): how each delivery ended. The
 * duplicate rate is the one worth graphing: a spike is a redelivery storm, usually consumers killed before they ack;
 * {@code dead-lettered} and {@code unreadable} are messages an operator must look at;</li>
 * <li>{@code idempotency.claim} (timer; tag {@code channel}): how long a claim takes;</li>
 * <li>{@code idempotency.takeovers} (counter; tag {@code channel}): claims taken over after their lease ran out (a
 * consumer died or stalled);</li>
 * <li>{@code idempotency.duplicates} (counter; tags {@code channel}, {@code origin}, {@code payload}): deliveries of a
 * key seen before, by where they come from ({@code redelivery}, {@code republish}, {@code takeover}, {@code unknown})
 * and how their payload compares with the one the key was written with ({@code same}, {@code mismatch},
 * {@code unknown});</li>
 * <li>{@code idempotency.duplicates.age} (timer; tags {@code channel}, {@code origin}): how long after its key was
 * confirmed each duplicate arrived, with a histogram; its maximum against the retention says whether the retention is
 * long enough;</li>
 * <li>{@code idempotency.purged} (counter): expired keys deleted;</li>
 * <li>{@code idempotency.claims.oldest.age} (gauge, seconds): the time since the oldest live claim was claimed or
 * last renewed; a value above the lease is a consumer that died holding it. Read from the store at most every
 * {@value #OLDEST_CLAIM_REFRESH_SECONDS} seconds, whatever the scrape rate.</li>
 * </ul>
 * Meters are created once per channel, so a delivery costs a map lookup and an increment.
 */
@Singleton
public class MicrometerIdempotencyMetrics implements IdempotencyMetrics {

    static final int OLDEST_CLAIM_REFRESH_SECONDS = 10;

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, ChannelMeters> channels = new ConcurrentHashMap<>();
    private final Counter purged;
    private final OldestClaim oldestClaim;

    @Inject
    public MicrometerIdempotencyMetrics(MeterRegistry registry, IdempotencyStore store) {
        this.registry = registry;
        this.purged = Counter.builder("idempotency.purged").description("Expired idempotency keys deleted")
                .register(registry);
        this.oldestClaim = new OldestClaim(store, Duration.ofSeconds(OLDEST_CLAIM_REFRESH_SECONDS));
        Gauge.builder("idempotency.claims.oldest.age", oldestClaim, OldestClaim::seconds)
                .description("Seconds since the oldest live claim was claimed or last renewed").baseUnit("seconds")
                .register(registry);
    }

    @Override
    public void delivery(String channel, Outcome outcome) {
        meters(channel).deliveries[outcome.ordinal()].increment();
    }

    @Override
    public void claimLatency(String channel, long nanos) {
        meters(channel).claims.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void takeover(String channel) {
        meters(channel).takeovers.increment();
    }

    @Override
    public void duplicate(String channel, DuplicateOrigin origin, PayloadMatch payload) {
        meters(channel).duplicates[origin.ordinal() * PAYLOADS + payload.ordinal()].increment();
    }

    @Override
    public void duplicateAge(String channel, DuplicateOrigin origin, long millis) {
        meters(channel).ages[origin.ordinal()].record(millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void purged(long rows) {
        purged.increment(rows);
    }

    private ChannelMeters meters(String channel) {
        return channels.computeIfAbsent(channel == null ? "" : channel, c -> new ChannelMeters(registry, c));
    }

    private static final int PAYLOADS = PayloadMatch.values().length;
    /** The histogram buckets of duplicate ages: from seconds (redeliveries) to a week (retentions). */
    private static final Duration[] AGE_BUCKETS = { Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(1),
            Duration.ofMinutes(10), Duration.ofHours(1), Duration.ofHours(6), Duration.ofHours(24), Duration.ofDays(7) };

    private static final class ChannelMeters {
        final Counter[] deliveries;
        final Timer claims;
        final Counter takeovers;
        final Counter[] duplicates;
        final Timer[] ages;

        ChannelMeters(MeterRegistry registry, String channel) {
            Outcome[] outcomes = Outcome.values();
            deliveries = new Counter[outcomes.length];
            for (Outcome outcome : outcomes) {
                deliveries[outcome.ordinal()] = Counter.builder("idempotency.deliveries")
                        .description("Deliveries to @Idempotent consumers, by how they ended")
                        .tag("channel", channel).tag("outcome", outcome.tag()).register(registry);
            }
            claims = Timer.builder("idempotency.claim").description("Time to claim a key in the idempotency store")
                    .tag("channel", channel).register(registry);
            takeovers = Counter.builder("idempotency.takeovers")
                    .description("Claims taken over after their lease ran out").tag("channel", channel)
                    .register(registry);
            DuplicateOrigin[] origins = DuplicateOrigin.values();
            duplicates = new Counter[origins.length * PAYLOADS];
            ages = new Timer[origins.length];
            for (DuplicateOrigin origin : origins) {
                for (PayloadMatch payload : PayloadMatch.values()) {
                    duplicates[origin.ordinal() * PAYLOADS + payload.ordinal()] = Counter
                            .builder("idempotency.duplicates")
                            .description("Deliveries of a key seen before, by origin and payload comparison")
                            .tag("channel", channel).tag("origin", origin.tag()).tag("payload", payload.tag())
                            .register(registry);
                }
                ages[origin.ordinal()] = Timer.builder("idempotency.duplicates.age")
                        .description("How long after its key was confirmed a duplicate arrived")
                        .tag("channel", channel).tag("origin", origin.tag()).serviceLevelObjectives(AGE_BUCKETS)
                        .register(registry);
            }
        }
    }

    /** The oldest claim's age, read from the store at most once per refresh period. */
    private static final class OldestClaim {
        private final IdempotencyStore store;
        private final long refreshNanos;
        private long readAt;
        private double seconds;
        private boolean read;

        OldestClaim(IdempotencyStore store, Duration refresh) {
            this.store = store;
            this.refreshNanos = refresh.toNanos();
        }

        synchronized double seconds() {
            long now = System.nanoTime();
            if (!read || now - readAt >= refreshNanos) {
                try {
                    seconds = store.oldestClaimAge().map(d -> d.toMillis() / 1000.0).orElse(0.0);
                } catch (RuntimeException e) {
                    seconds = Double.NaN; // the store cannot be read: no value rather than a wrong one
                }
                readAt = now;
                read = true;
            }
            return seconds;
        }
    }
}
