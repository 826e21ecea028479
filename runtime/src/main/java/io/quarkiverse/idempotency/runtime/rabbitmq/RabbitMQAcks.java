package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.util.concurrent.CompletionStage;

import com.rabbitmq.client.Channel;

import io.smallrye.reactive.messaging.rabbitmq.ClientHolder;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.vertx.mutiny.core.Context;

/**
 * The connector's own acks (a handled message, a duplicate), for messages of channels consumed by {@code @Idempotent}
 * methods, sent to the AMQP channel that delivered the message, like the extension's other settlements. The connector
 * acks on its client's current AMQP channel: after a reconnect, the delivery tag of a message handled across it would
 * reach the new channel, where it acknowledges whichever message the new channel delivered under that tag (a message
 * that may not have run yet, lost if its attempt ends in a retry or the process stops first) or, when there is none,
 * makes the broker close the new channel. A message whose AMQP channel closed was requeued by the broker already: its ack is
 * dropped.
 * <p>
 * The build rewrites SmallRye's {@code RabbitMQAck#handle} to call {@link #handle}; messages of other channels are
 * acknowledged as the connector does.
 */
public final class RabbitMQAcks {

    private RabbitMQAcks() {
    }

    /**
     * @param channel the channel as the connector names it ({@code <channel>$<i>} for a copy)
     * @return completed on the message's context once the ack is under way, as the connector's
     */
    public static CompletionStage<Void> handle(String channel, IncomingRabbitMQMessage<?> message, Context context) {
        RabbitMQConsumerChannels consumers = RabbitMQConsumerChannels.current();
        RabbitMQConsumerChannels.Tracker tracker = consumers == null ? null : consumers.of(channel);
        Channel deliveredOn = tracker == null ? null : tracker.deliveredOn(message.getRabbitMQMessage().consumerTag());
        if (deliveredOn == null) {
            return ClientHolder.runOnContext(context, message, IncomingRabbitMQMessage::acknowledgeMessage);
        }
        long deliveryTag = message.getRabbitMQMessage().envelope().getDeliveryTag();
        // As the connector does: the frame written by a worker (never on the event loop), the ack's stage completed on
        // the message's context without waiting for it.
        DeliveredMessage.blocking(() -> DeliveredMessage.ackOn(deliveredOn, deliveryTag, channel));
        return ClientHolder.runOnContext(context, message, sent -> {
        });
    }
}
