package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyException;
import io.smallrye.reactive.messaging.rabbitmq.ClientHolder;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailureHandler;
import io.vertx.mutiny.core.Context;

/**
 * Maps idempotency outcomes to RabbitMQ and hands every other failure to the channel's own strategy.
 */
final class IdempotencyFailureHandler implements RabbitMQFailureHandler {

    private static final Logger LOG = Logger.getLogger(IdempotencyFailureHandler.class);

    private final String channel;
    private final RabbitMQFailureHandler delegate;
    private final long retryDelayMillis;

    IdempotencyFailureHandler(String channel, RabbitMQFailureHandler delegate, Duration retryDelay) {
        this.channel = channel;
        this.delegate = delegate;
        this.retryDelayMillis = retryDelay.toMillis();
    }

    @Override
    public <V> CompletionStage<Void> handle(IncomingRabbitMQMessage<V> message, Metadata metadata, Context context,
            Throwable reason) {
        IdempotencyException outcome = outcome(reason);
        if (outcome == null) {
            return delegate.handle(message, metadata, context, reason);
        }
        if (!outcome.requeue()) {
            LOG.debugf("Channel %s: rejecting message without requeue: %s", channel, outcome.getMessage());
            return ClientHolder.runOnContext(context, message, m -> m.rejectMessage(outcome, false));
        }
        if (retryDelayMillis <= 0) {
            return ClientHolder.runOnContext(context, message, m -> m.rejectMessage(outcome, true));
        }
        // The message stays unacknowledged while it waits, then goes back to the queue. The channel does not wait
        // for it: the nack completes now, so one busy message does not hold up the ones behind it.
        context.owner().setTimer(retryDelayMillis, id -> ClientHolder
                .runOnContext(context, message, m -> m.rejectMessage(outcome, true))
                .whenComplete((ignored, failure) -> {
                    if (failure != null) {
                        LOG.warnf(failure, "Channel %s: could not requeue a message after %d ms", channel,
                                retryDelayMillis);
                    }
                }));
        return CompletableFuture.completedFuture(null);
    }

    private static IdempotencyException outcome(Throwable reason) {
        for (Throwable t = reason; t != null; t = t.getCause()) {
            if (t instanceof IdempotencyException e) {
                return e;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}
