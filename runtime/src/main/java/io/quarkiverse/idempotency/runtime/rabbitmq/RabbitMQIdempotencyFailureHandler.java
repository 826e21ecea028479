package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.Failures;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailureHandler;
import io.vertx.mutiny.core.Context;

/**
 * Maps idempotency outcomes to RabbitMQ: a message to try again later goes back to the queue after its delay
 * ({@link Requeue}); a message to dead-letter is published to the dead-letter exchange with publisher confirms, then
 * acknowledged ({@link DeadLetterPublish}), and so is a message whose payload could not be converted for the method
 * (it never reached it). Any other failure goes to the strategy named by {@code idempotency.failure-strategy}.
 */
final class RabbitMQIdempotencyFailureHandler implements RabbitMQFailureHandler {

    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final String channel;
    private final String connectorChannel;
    private final RabbitMQFailureHandler delegate;
    private final Deliveries deliveries;
    private final RabbitMQConsumerChannels consumers;
    private final Requeue requeue;
    private final DeadLetterPublish deadLetters;

    /**
     * @param connectorChannel the channel as the connector names it ({@code <channel>$<i>} for a copy)
     * @param deadLetters where dead letters are published, or {@code null} to reject them to the broker's own
     *        dead-lettering
     * @param quorum whether the queue is a quorum queue, whose delivery limit counts every requeue
     * @param prefetch the channel's prefetch ({@code max-outstanding-messages}), or 0 when it has none
     */
    RabbitMQIdempotencyFailureHandler(String channel, String connectorChannel, RabbitMQFailureHandler delegate,
            Deliveries deliveries, DeadLetterTarget deadLetters, RabbitMQConsumerChannels consumers, String queue,
            boolean quorum, int prefetch) {
        this.channel = channel;
        this.connectorChannel = connectorChannel;
        this.delegate = delegate;
        this.deliveries = deliveries;
        this.consumers = consumers;
        this.requeue = new Requeue(channel, queue, quorum, prefetch, CONFIRM_TIMEOUT);
        this.deadLetters = new DeadLetterPublish(channel, deadLetters, requeue, deliveries::requeueDelay,
                CONFIRM_TIMEOUT);
    }

    @Override
    public <V> CompletionStage<Void> handle(IncomingRabbitMQMessage<V> message, Metadata metadata, Context context,
            Throwable reason) {
        IdempotencyException outcome = Failures.outcomeToMap(message, channel, reason, deliveries);
        if (outcome == null) {
            return delegate.handle(message, metadata, context, reason);
        }
        DeliveredMessage delivered = new DeliveredMessage(message, context, channel, consumers.of(connectorChannel));
        if (outcome.requeue()) {
            Duration delay = outcome.retryDelay() != null ? outcome.retryDelay() : deliveries.requeueDelay();
            requeue.later(delivered, delay,
                    outcome instanceof DeliveryInProgressException busy ? busy.holderEnded() : null);
        } else {
            DeliveredMessage.blocking(() -> deadLetters.deadLetter(delivered, outcome));
        }
        return CompletableFuture.completedFuture(null);
    }
}
