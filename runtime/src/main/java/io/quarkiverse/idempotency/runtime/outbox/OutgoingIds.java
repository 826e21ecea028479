package io.quarkiverse.idempotency.runtime.outbox;

import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Puts an outbox message's id where a connector carries it, so that a downstream consumer reads it as the message's
 * id: one bean per connector the extension knows (RabbitMQ's {@code message_id}, Kafka's {@code ce_id} header).
 */
public interface OutgoingIds {

    /** @return the connector's name, as in {@code mp.messaging.outgoing.<channel>.connector} */
    String connector();

    /**
     * @param channel an outgoing channel of this connector that an outbox sends to
     * @return how the channel's messages carry their ids, decided once, when the channel's outbox starts
     */
    Stamp stamp(String channel);

    /** Puts a message's id (and key) where one channel's connector carries it. */
    @FunctionalInterface
    interface Stamp {

        /**
         * @param key the key that routes the message (Kafka's record key, RabbitMQ's routing key), {@code null} for
         *        none
         * @return the metadata with the id and the key added
         */
        Metadata with(Metadata metadata, String messageId, String key);
    }

    /**
     * @param channel an outgoing channel of this connector that an outbox sends to
     * @return why the connector would ack a message of the channel before the broker has it (publisher confirms
     *         turned off, Kafka acks below all), with the remedy; {@code null} when it waits for the broker
     */
    String unconfirmed(String channel);
}
