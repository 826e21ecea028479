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
        // The message stays unacknowledged while it waits, then goes back to the queue.
        CompletableFuture<Void> requeued = new CompletableFuture<>();
        context.owner().setTimer(retryDelayMillis, id -> ClientHolder
                .runOnContext(context, message, m -> m.rejectMessage(outcome, true))
                .whenComplete((ignored, failure) -> {
                    if (failure != null) {
                        requeued.completeExceptionally(failure);
                    } else {
                        requeued.complete(null);
                    }
                }));
        return requeued;
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
