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

    /** The message was handled (its key is confirmed now). */
    default void handled(Message<?> message) {
    }
}
