package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * What a connector can tell about one of its messages, beyond its outcome mapping: one bean per connector that can
 * tell more than the defaults. Every method answers for the connector's own messages and keeps the default for others.
 */
public interface ConnectorSupport {

    /**
     * Whether the message may have been delivered before (RabbitMQ's {@code redelivered} flag, say). A message of an
     * in-transaction method that may have been is claimed on a lease before its transaction starts, at the cost of one
     * more commit: if its attempt kills the process, the claim is left behind and taken over, and the lost attempt
     * counted, so that such a message is dead-lettered within its budget instead of killing process after process.
     */
    default boolean mayBeRedelivered(Message<?> message) {
        return false;
    }

    /**
     * Whether this consumer still owns the message (Kafka: its partition was not revoked since it was polled), so that
     * a message retried in place is let go, unacknowledged, once another consumer owns it.
     */
    default boolean stillOwned(Message<?> message) {
        return true;
    }

    /**
     * Whether the broker delivered this message before, when the connector can tell for sure (RabbitMQ's
     * {@code redelivered} flag): {@code null} when it cannot, or the message is not this connector's. Tells a duplicate
     * that is a redelivery from a republish.
     */
    default Boolean redelivered(Message<?> message) {
        return null;
    }

    /**
     * The message's body as the broker delivered it, for its payload's fingerprint; {@code null} when the connector
     * does not keep it, or the message is not this connector's.
     */
    default byte[] body(Message<?> message) {
        return null;
    }

    /** The message was handled (its key is confirmed now). */
    default void handled(Message<?> message) {
    }
}
