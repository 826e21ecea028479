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
 *
 * @param connectorChannel the channel as the connector names it ({@code <channel>$<i>} for a copy)
 */
record RabbitMQIdempotencyFailureHandler(String channel, String connectorChannel, RabbitMQFailureHandler delegate,
        Deliveries deliveries, RabbitMQConsumerChannels consumers, Requeue requeue, DeadLetterPublish deadLetters)
        implements
            RabbitMQFailureHandler {

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
