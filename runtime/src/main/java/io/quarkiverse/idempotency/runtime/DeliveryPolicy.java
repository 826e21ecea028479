package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

/**
 * The settings of one {@code @Idempotent} method on one channel, resolved at startup: the configuration's defaults,
 * then the annotation, then {@code quarkus.idempotency.channels."<channel>"}.
 *
 * @param retention how long a handled key is remembered
 * @param lease how long a lease-mode claim is honoured unless renewed
 * @param retry the attempt budget and the delays between attempts
 */
public record DeliveryPolicy(Duration retention, Duration lease, RetryPolicy retry) {
}
