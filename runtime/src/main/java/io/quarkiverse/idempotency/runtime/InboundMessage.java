package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The connector message being handled, and the channel it came from, as the interceptor finds it in the message's
 * Vert.x context.
 *
 * @param channel the {@code @Incoming} channel
 * @param message the message as the connector produced it
 */
public record InboundMessage(String channel, Message<?> message) {
}
