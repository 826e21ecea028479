package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.Failures;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.ClientHolder;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailureHandler;
import io.vertx.mutiny.core.Context;
import io.vertx.mutiny.core.buffer.Buffer;

/**
 * Maps idempotency outcomes to RabbitMQ: a message to retry waits for its delay unacknowledged, then goes back to the
 * queue; a message to dead-letter is published to the queue's dead-letter exchange with headers saying why, then
 * acknowledged (or, when the broker routes dead letters itself, rejected without requeue). A message whose payload
 * could not be converted for the method (it never reached it) is dead-lettered at once. Any other failure goes to
 * the strategy named by {@code idempotency.failure-strategy}.
 */
final class RabbitMQIdempotencyFailureHandler implements RabbitMQFailureHandler {

    private static final Logger LOG = Logger.getLogger(RabbitMQIdempotencyFailureHandler.class);

    private final String channel;
    private final RabbitMQFailureHandler delegate;
    private final Deliveries deliveries;
    private final DeadLetterTarget deadLetters;
    private volatile ConsumerClient consumer;

    /**
     * @param deadLetters where dead letters are published, or {@code null} to reject them to the broker's own
     *        dead-lettering
     */
    RabbitMQIdempotencyFailureHandler(String channel, RabbitMQFailureHandler delegate, Deliveries deliveries,
            DeadLetterTarget deadLetters) {
        this.channel = channel;
        this.delegate = delegate;
        this.deliveries = deliveries;
        this.deadLetters = deadLetters;
    }

    @Override
    public <V> CompletionStage<Void> handle(IncomingRabbitMQMessage<V> message, Metadata metadata, Context context,
            Throwable reason) {
        IdempotencyException outcome = Failures.outcomeToMap(message, channel, reason, deliveries);
        if (outcome == null) {
            return delegate.handle(message, metadata, context, reason);
        }
        if (!outcome.requeue()) {
            return deadLetter(message, context, outcome);
        }
        Duration delay = outcome.retryDelay() != null ? outcome.retryDelay() : deliveries.requeueDelay();
        if (delay.isZero() || delay.isNegative()) {
            return ClientHolder.runOnContext(context, message, m -> m.rejectMessage(outcome, true));
        }
        // The message stays unacknowledged while it waits, then goes back to the queue. The channel does not wait
        // for it: the nack completes now, so one waiting message does not hold up the ones behind it.
        ConsumerClient client = consumer(message);
        long generation = client.generation();
        context.owner().setTimer(delay.toMillis(), id -> {
            if (client.generation() != generation) {
                // Its AMQP channel closed meanwhile, so the broker requeued it already; its delivery tag means
                // nothing (or another message) on the new channel.
                LOG.debugf("Channel %s: dropped the delayed requeue of a message delivered before a reconnect; the"
                        + " broker requeued it when its channel closed", channel);
                return;
            }
            ClientHolder.runOnContext(context, message, m -> m.rejectMessage(outcome, true));
        });
        return CompletableFuture.completedFuture(null);
    }

    private CompletionStage<Void> deadLetter(IncomingRabbitMQMessage<?> message, Context context,
            IdempotencyException outcome) {
        if (deadLetters == null) {
            return ClientHolder.runOnContext(context, message, m -> m.rejectMessage(outcome, false));
        }
        ConsumerClient client = consumer(message);
        long generation = client.generation();
        // Published on the consumer's own AMQP channel, then acknowledged on it: the broker handles the two in order.
        return Uni.createFrom().deferred(() -> client.client().basicPublish(deadLetters.exchange(),
                deadLetters.routingKey(), DeadLetterTarget.properties(message, channel, outcome),
                Buffer.newInstance(message.message.body())))
                .onItemOrFailure().transformToUni((ignored, failure) -> {
                    if (client.generation() != generation) {
                        return Uni.createFrom().voidItem(); // requeued by the broker; a later delivery decides
                    }
                    if (failure != null) {
                        LOG.warnf("Channel %s: could not publish a dead letter to exchange '%s' (%s); rejecting it"
                                + " to the queue's own dead-lettering instead", channel, deadLetters.exchange(),
                                failure.toString());
                        return Uni.createFrom().completionStage(
                                ClientHolder.runOnContext(context, message, m -> m.rejectMessage(outcome, false)));
                    }
                    return Uni.createFrom().completionStage(
                            ClientHolder.runOnContext(context, message, IncomingRabbitMQMessage::acknowledgeMessage));
                })
                .subscribeAsCompletionStage();
    }

    private ConsumerClient consumer(IncomingRabbitMQMessage<?> message) {
        ConsumerClient client = consumer;
        if (client == null) {
            client = ConsumerClient.of(message);
            consumer = client;
        }
        return client;
    }
}
