package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.ScopedKey;

/**
 * What a delivery brings where: the method's plan and its settings on the channel that delivered the message,
 * the message's key and its metadata.
 *
 * @param plan the method's plan
 * @param policy the method's settings on the channel
 * @param channel the channel that delivered the message (or the programmatic form's scope)
 * @param key the key, under its scope
 * @param metadata the message's metadata
 * @param startedNanos when the delivery started, as {@link System#nanoTime()} read it
 */
public record DeliveryTarget(MethodPlan plan, DeliveryPolicy policy, String channel, ScopedKey key, Metadata metadata,
        long startedNanos) {
}
