package io.quarkiverse.idempotency;

/**
 * What a store keeps with a key about the message that wrote it, so that a later delivery of the key can be compared
 * with it: was it the same message, and the same payload?
 *
 * @param messageId the broker's message id (RabbitMQ's {@code message_id}, a Kafka record's id header or position), or
 *        {@code null} when the message has none
 * @param fingerprint a short digest of the payload (see {@code quarkus.idempotency.payload-mismatch}), or {@code null}
 *        when it was not computed (a payload type without a canonical byte form, the check turned off, a key written
 *        by an earlier version)
 */
public record MessageFacts(String messageId, String fingerprint) {

    /** Nothing known. */
    public static final MessageFacts NONE = new MessageFacts(null, null);

    /** @return the facts, or {@link #NONE} when both are unknown */
    public static MessageFacts of(String messageId, String fingerprint) {
        return messageId == null && fingerprint == null ? NONE : new MessageFacts(messageId, fingerprint);
    }
}
