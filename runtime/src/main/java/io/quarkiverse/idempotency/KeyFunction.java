package io.quarkiverse.idempotency;

import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Computes the idempotency key of a message from its payload and metadata.
 * <p>
 * Implementations name the payload type they accept; the build fails when an {@link Idempotent} method's payload
 * cannot be passed to its key function. Return {@code null} or a blank string when the message has no key (a
 * missing field, say): such a message is rejected without requeue, because the same function would find no key in
 * it next time either.
 * <p>
 * Prefix business keys ({@code "charge:" + orderId}) when several kinds of key share a scope.
 *
 * @param <T> the payload type
 */
@FunctionalInterface
public interface KeyFunction<T> {

    /**
     * @param payload the message payload
     * @param metadata the message metadata (connector metadata such as {@code IncomingRabbitMQMetadata} included)
     * @return the key, or {@code null} when the message has none
     */
    String key(T payload, Metadata metadata);
}
