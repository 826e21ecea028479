package io.quarkiverse.idempotency.runtime;

import java.util.Locale;

/**
 * Why a key came back after it was seen: what an operator asks first about a duplicate.
 */
public enum DuplicateOrigin {
    /**
     * The broker delivered the same message again: RabbitMQ flagged it {@code redelivered} (a consumer died or its
     * channel closed before the ack, or the extension requeued it), or it carries the id the key was written with and
     * the connector cannot tell redeliveries apart (a Kafka record read again from an uncommitted offset).
     */
    REDELIVERY,
    /**
     * A new message with a key already handled: its id differs from the one the key was written with, or RabbitMQ
     * delivers it for the first time. An upstream retry, an outbox publishing again, or a key function that maps two
     * messages to one key.
     */
    REPUBLISH,
    /** The key's previous owner died (or stalled) holding it: its claim was taken over and the handler runs again. */
    TAKEOVER,
    /** The key was written without the facts to tell (by an earlier version, or a message without an id). */
    UNKNOWN;

    /** @return the metric tag value: the name in lower case */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
