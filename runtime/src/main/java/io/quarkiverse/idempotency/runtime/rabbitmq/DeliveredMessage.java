package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;

import io.quarkiverse.idempotency.IdempotencyException;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.reactive.messaging.rabbitmq.ClientHolder;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.vertx.mutiny.core.Context;

/**
 * A message whose outcome the extension settles itself, the AMQP channel that delivered it, and what to publish a copy
 * of it with: acked or rejected on that channel, by its delivery tag, never on the channel that replaced it.
 */
final class DeliveredMessage {

    private static final Logger LOG = Logger.getLogger(DeliveredMessage.class);

    final IncomingRabbitMQMessage<?> message;
    final Context context;
    final RabbitMQConsumerChannels.Tracker tracker;
    final Channel deliveredOn;
    private final String channel;
    private final long deliveryTag;

    /**
     * @param channel the application's channel, for the logs and the dead letters' headers
     * @param tracker the AMQP channels of the connector's channel, or {@code null} when they are not tracked (a client
     *        of the application's own options bean)
     */
    DeliveredMessage(IncomingRabbitMQMessage<?> message, Context context, String channel,
            RabbitMQConsumerChannels.Tracker tracker) {
        this.message = message;
        this.context = context;
        this.channel = channel;
        this.tracker = tracker;
        this.deliveryTag = message.getRabbitMQMessage().envelope().getDeliveryTag();
        this.deliveredOn = tracker == null ? null : tracker.deliveredOn(message.getRabbitMQMessage().consumerTag());
    }

    // A quorum queue counts earlier deliveries in this header: its delivery limit would count a requeue too.
    boolean countedByTheBroker() {
        var headers = message.getRabbitMQMessage().properties().getHeaders();
        return headers != null && headers.containsKey("x-delivery-count");
    }

    byte[] body() {
        return message.getRabbitMQMessage().body().getBytes();
    }

    /** @return the properties of a copy going back to the queue */
    AMQP.BasicProperties requeued() {
        return DeadLetterTarget.requeued(message);
    }

    /** @return the properties of a dead letter, the outcome's reason in its headers */
    AMQP.BasicProperties deadLettered(IdempotencyException outcome) {
        return DeadLetterTarget.properties(message, channel, outcome);
    }

    void ack() {
        settle(ch -> ch.basicAck(deliveryTag, false), IncomingRabbitMQMessage::acknowledgeMessage);
    }

    void nack(boolean requeue) {
        settle(ch -> ch.basicNack(deliveryTag, false, requeue), m -> m.rejectMessage(null, requeue));
    }

    // On the AMQP channel that delivered the message: once it closed, the broker requeued the message already, and its
    // delivery tag must not reach the channel that replaced it.
    private void settle(ChannelCall call, Consumer<IncomingRabbitMQMessage<?>> viaClient) {
        if (deliveredOn == null) {
            // no tracked channel (a client of the application's own options bean): the connector's client
            ClientHolder.runOnContext(context, message, viaClient);
            return;
        }
        settleOn(deliveredOn, call, channel);
    }

    /** Acknowledges a message on the AMQP channel that delivered it, or not at all once that channel closed. Blocks. */
    static void ackOn(Channel deliveredOn, long deliveryTag, String channel) {
        settleOn(deliveredOn, ch -> ch.basicAck(deliveryTag, false), channel);
    }

    private static void settleOn(Channel deliveredOn, ChannelCall call, String channel) {
        if (!deliveredOn.isOpen()) {
            LOG.debugf("Channel %s: the AMQP channel that delivered a message closed before it was settled; the"
                    + " broker requeued it already", channel);
            return;
        }
        try {
            call.run(deliveredOn);
        } catch (Exception e) {
            LOG.debugf("Channel %s: could not settle a message on its AMQP channel (%s); the broker requeues it"
                    + " when the channel closes", channel, e.toString());
        }
    }

    /** Runs {@code action} once: after the delay on the message's context, or as soon as {@code sooner} completes. */
    void after(java.time.Duration delay, CompletionStage<Void> sooner, Runnable action) {
        AtomicBoolean done = new AtomicBoolean();
        Runnable once = () -> {
            if (done.compareAndSet(false, true)) {
                action.run();
            }
        };
        if (delay.isZero() || delay.isNegative()) {
            once.run();
            return;
        }
        long timer = context.owner().setTimer(delay.toMillis(), id -> once.run());
        if (sooner != null) {
            sooner.thenRun(() -> {
                context.owner().cancelTimer(timer);
                once.run();
            });
        }
    }

    /** Runs AMQP channel calls, which block: never on the event loop. */
    static void blocking(Runnable work) {
        Infrastructure.getDefaultWorkerPool().execute(work);
    }

    @FunctionalInterface
    private interface ChannelCall {
        void run(Channel channel) throws Exception;
    }
}
