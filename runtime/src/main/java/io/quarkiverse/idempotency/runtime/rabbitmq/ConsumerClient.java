package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.lang.reflect.Field;

import io.smallrye.reactive.messaging.rabbitmq.ClientHolder;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.vertx.mutiny.rabbitmq.RabbitMQClient;
import io.vertx.rabbitmq.impl.RabbitMQClientImpl;

/**
 * The RabbitMQ client a channel consumes with, and its channel generation. The connector keeps one client per
 * incoming channel for the channel's life and recovers its AMQP channel inside it; a message does not expose it, so it
 * is read once per channel from the first message that needs it.
 * <p>
 * The generation grows whenever the client opens a new AMQP channel (a reconnect): a delivery tag belongs to the
 * generation it was delivered on, and acknowledging it on a later one would hit another message or close the channel
 * ("unknown delivery tag"). When the old channel closed, the broker requeued its unacknowledged messages already.
 */
final class ConsumerClient {

    private static final Field HOLDER = holderField();

    private final RabbitMQClient client;

    private ConsumerClient(RabbitMQClient client) {
        this.client = client;
    }

    static ConsumerClient of(IncomingRabbitMQMessage<?> message) {
        try {
            return new ConsumerClient(((ClientHolder) HOLDER.get(message)).client());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot read the RabbitMQ client of a message", e);
        }
    }

    /** @return the client, for publishing on the consumer's own connection */
    RabbitMQClient client() {
        return client;
    }

    /** @return the current AMQP channel's generation */
    long generation() {
        return client.getDelegate() instanceof RabbitMQClientImpl impl ? impl.getChannelInstance() : 0;
    }

    private static Field holderField() {
        try {
            Field field = IncomingRabbitMQMessage.class.getDeclaredField("holder");
            field.setAccessible(true);
            return field;
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("This version of the RabbitMQ connector keeps its client elsewhere", e);
        }
    }
}
