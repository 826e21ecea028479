package io.quarkiverse.idempotency.runtime.outbox;

import java.time.Duration;

import io.quarkiverse.idempotency.runtime.OutboxConfig;
import io.quarkus.runtime.configuration.DurationConverter;

/** The outbox's settings, checked once. */
record OutboxSettings(Duration lease, int batchSize, Duration initialDelay, Duration maxDelay) {

    OutboxSettings {
        if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("quarkus.idempotency.outbox.lease must be at least 1s, not " + lease);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("quarkus.idempotency.outbox.batch-size must be at least 1, not "
                    + batchSize);
        }
        if (initialDelay.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("quarkus.idempotency.outbox.retry-initial-delay must be at least 100ms,"
                    + " not " + initialDelay + ": a refused message would be sent again at once, over and over");
        }
        if (maxDelay.compareTo(initialDelay) < 0) {
            throw new IllegalArgumentException("quarkus.idempotency.outbox.retry-max-delay (" + maxDelay
                    + ") must be at least quarkus.idempotency.outbox.retry-initial-delay (" + initialDelay + ")");
        }
    }

    static OutboxSettings of(OutboxConfig config) {
        checkRelayEvery(config.relayEvery(), config.lease());
        return new OutboxSettings(config.lease(), config.batchSize(), config.retryInitialDelay(),
                config.retryMaxDelay());
    }

    /**
     * The relay job renews the leases of messages waiting for their broker's confirm once they are a quarter lease
     * old: it must run at least that often, or another instance could claim and send them meanwhile.
     *
     * @throws IllegalArgumentException when it would not
     */
    static void checkRelayEvery(String relayEvery, Duration lease) {
        String every = relayEvery.trim();
        if (every.equalsIgnoreCase("off") || every.equalsIgnoreCase("disabled")) {
            return;
        }
        Duration period = DurationConverter.parseDuration(every);
        if (period != null && period.compareTo(lease.dividedBy(4)) > 0) {
            throw new IllegalArgumentException("quarkus.idempotency.outbox.relay-every (" + every + ") must be at most a"
                    + " quarter of quarkus.idempotency.outbox.lease (" + lease + "): each run renews the leases of the"
                    + " messages waiting for their broker's confirm, and a lease left to run out lets another instance"
                    + " send its message meanwhile. Shorten relay-every or lengthen the lease");
        }
    }

    /**
     * @param failedBefore how many sendings of the message failed before this one
     * @param random in [0, 1): spreads the retries of messages refused together by up to a fifth
     * @return the delay before the next sending
     */
    Duration retryDelay(int failedBefore, double random) {
        long base = initialDelay.toMillis() << Math.min(failedBefore, 30);
        long capped = base < 0 || base > maxDelay.toMillis() ? maxDelay.toMillis() : base;
        return Duration.ofMillis((long) (capped * (0.8 + 0.2 * random)));
    }
}
