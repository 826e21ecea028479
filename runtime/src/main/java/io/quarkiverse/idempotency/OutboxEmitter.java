package io.quarkiverse.idempotency;

/**
 * Sends messages to a channel through the transactional outbox: inject it with {@code @Channel("receipts")} in place
 * of an {@code Emitter}, and call it inside a transaction (an {@code @Idempotent @Transactional} handler, typically).
 * <p>
 * {@link #send} writes the message to the outbox table in the caller's transaction, on the datasource of the
 * idempotency keys: one commit for the work, the key and the message. A rollback sends nothing. After the commit the
 * message is sent at once, with the broker's confirm (RabbitMQ publisher confirms, Kafka {@code acks=all}), in the
 * order the transaction sent it; after a crash or a broker outage the relay job sends what is left. It is sent at
 * least once, always with the same id (RabbitMQ's {@code message_id}, Kafka's {@code ce_id} header), so that a
 * downstream {@code @Idempotent} consumer with the default key drops a re-send as a duplicate.
 * <p>
 * A send outside a transaction is refused with an {@link IllegalStateException}: it is never sent outside the
 * outbox.
 *
 * @param <T> the payload: a {@code String}, a {@code byte[]}, a Vert.x {@code JsonObject}, {@code JsonArray} or
 *        {@code Buffer}, or an object that Jackson writes and reads back (it is stored as JSON and read back as its
 *        class before it is sent, so the channel serializes it as it would any payload)
 */
public interface OutboxEmitter<T> {

    /**
     * Writes the message to the outbox in the caller's transaction, with a new random id.
     *
     * @return the message's id, the one it carries on every sending
     * @throws IllegalStateException when no transaction is active, or the outbox table cannot be written (the
     *         transaction is then rolled back by its owner)
     */
    String send(T payload);

    /**
     * Writes the message to the outbox in the caller's transaction, with the id given (derived from the incoming
     * message's key, say).
     *
     * @param messageId the id the message carries on every sending, at most 255 characters
     * @return the id
     * @throws IllegalStateException when no transaction is active, or the outbox table cannot be written
     */
    String send(T payload, String messageId);

    /**
     * Writes the message to the outbox in the caller's transaction, with a key that routes it: Kafka's record key (the
     * partition it goes to, so that the messages of one key keep the order they were sent in), RabbitMQ's routing key
     * (in place of the channel's {@code default-routing-key}). It is kept with the message, the same on every re-send.
     * On Kafka the key is a {@code String}: the channel's {@code key.serializer} must write one (the connector's
     * default does).
     *
     * @param messageId the id the message carries on every sending, at most 255 characters; {@code null} for a new
     *        random id
     * @param key the key, not blank
     * @return the message's id
     * @throws IllegalStateException when no transaction is active, or the outbox table cannot be written
     */
    String send(T payload, String messageId, String key);
}
