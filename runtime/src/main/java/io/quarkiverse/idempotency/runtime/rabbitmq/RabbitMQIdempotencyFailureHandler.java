package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;

import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.Failures;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.reactive.messaging.rabbitmq.ClientHolder;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailureHandler;
import io.vertx.mutiny.core.Context;

/**
 * Maps idempotency outcomes to RabbitMQ.
 * <ul>
 * <li>A message to try again later waits for its delay unacknowledged (or, when a delivery of this process holds its
 * key, until that delivery ends), then goes back to the queue: rejected with requeue on the AMQP channel that
 * delivered it; on a quorum queue, whose delivery limit counts every such return, republished with publisher confirms
 * and then acknowledged, so that a busy key or a store outage never spends the broker's limit. When the channel has a
 * prefetch, at most half of it waits there: past that, a message waits in the {@link WaitQueue} (a copy published
 * with publisher confirms, then the message acknowledged), and the waiting ones go back to the back of the queue, not
 * to the front, where they and their like would be taken again before the others; so waiting messages never stall
 * the ones behind them, and none comes back before its delay.</li>
 * <li>A message to dead-letter is published to the queue's dead-letter exchange as a copy (body, properties but a
 * per-message expiration, the reason in headers) with publisher confirms, and acknowledged only once the broker
 * confirmed that it routed the copy; a copy it cannot route or take leaves the message to come back after the requeue
 * delay, never lost. When the broker dead-letters the queue itself (a policy), the message is rejected without
 * requeue.</li>
 * <li>A message whose payload could not be converted for the method (it never reached it) is dead-lettered at
 * once.</li>
 * <li>Any other failure goes to the strategy named by {@code idempotency.failure-strategy}.</li>
 * </ul>
 */
final class RabbitMQIdempotencyFailureHandler implements RabbitMQFailureHandler {

    private static final Logger LOG = Logger.getLogger(RabbitMQIdempotencyFailureHandler.class);
    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final String channel;
    private final String connectorChannel;
    private final RabbitMQFailureHandler delegate;
    private final Deliveries deliveries;
    private final DeadLetterTarget deadLetters;
    private final RabbitMQConsumerChannels consumers;
    private final String queue;
    private final boolean quorum;
    private final int prefetch;
    private final Map<Channel, AtomicInteger> waiting = new ConcurrentHashMap<>();
    private final WaitQueue waitQueue;

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
        this.deadLetters = deadLetters;
        this.consumers = consumers;
        this.queue = queue;
        this.quorum = quorum;
        this.prefetch = prefetch;
        this.waitQueue = new WaitQueue(channel, queue);
    }

    @Override
    public <V> CompletionStage<Void> handle(IncomingRabbitMQMessage<V> message, Metadata metadata, Context context,
            Throwable reason) {
        IdempotencyException outcome = Failures.outcomeToMap(message, channel, reason, deliveries);
        if (outcome == null) {
            return delegate.handle(message, metadata, context, reason);
        }
        Delivered delivered = new Delivered(message, context);
        if (!outcome.requeue()) {
            blocking(() -> deadLetter(delivered, outcome));
            return CompletableFuture.completedFuture(null);
        }
        // The message stays unacknowledged while it waits, then goes back to the queue. The channel does not wait
        // for it: the nack completes now, so one waiting message does not hold up the ones behind it.
        Duration delay = outcome.retryDelay() != null ? outcome.retryDelay() : deliveries.requeueDelay();
        CompletionStage<Void> sooner = outcome instanceof DeliveryInProgressException busy ? busy.holderEnded() : null;
        AtomicInteger held = waiting(delivered);
        if (held != null && held.incrementAndGet() > Math.max(1, prefetch / 2) && sooner == null) {
            // Half the prefetch waits already: this one waits in the wait queue, so that the messages behind it keep
            // the other half. (One whose key a delivery of this process holds waits here: it comes back as soon as
            // that delivery ended, which a copy in the wait queue could not.)
            held.decrementAndGet();
            blocking(() -> park(delivered, delay, sooner, held));
            return CompletableFuture.completedFuture(null);
        }
        waitInPlace(delivered, delay, sooner, held);
        return CompletableFuture.completedFuture(null);
    }

    // Unacknowledged, for its delay (or until the local holder of its key ended); then back to the queue.
    private void waitInPlace(Delivered delivered, Duration delay, CompletionStage<Void> sooner, AtomicInteger held) {
        after(delivered.context, delay, sooner, () -> blocking(() -> {
            if (held != null) {
                held.decrementAndGet();
            }
            requeue(delivered, held != null);
        }));
    }

    private void park(Delivered delivered, Duration delay, CompletionStage<Void> sooner, AtomicInteger held) {
        try {
            if (waitQueue.park(delivered.tracker, delivered.message, delay, CONFIRM_TIMEOUT)) {
                delivered.ack();
                return;
            }
        } catch (Exception e) {
            LOG.debugf("Channel %s: could not put a message in %s (%s); it waits where it is", channel,
                    waitQueue.name(), e.toString());
        }
        held.incrementAndGet();
        waitInPlace(delivered, delay, sooner, held);
    }

    // How many messages delivered on the message's AMQP channel wait to come back, when the channel has a prefetch:
    // each of them holds a slot of it.
    private AtomicInteger waiting(Delivered delivered) {
        Channel on = delivered.deliveredOn;
        if (prefetch <= 0 || on == null || delivered.tracker == null) {
            return null;
        }
        waiting.keySet().removeIf(c -> !c.isOpen());
        return waiting.computeIfAbsent(on, c -> new AtomicInteger());
    }

    /**
     * @param toTail whether to put it at the back of the queue: a plain requeue puts it back where it was, in front of
     *        the others, which on a channel with a prefetch would take it and its like again before them
     */
    private void requeue(Delivered delivered, boolean toTail) {
        if (delivered.tracker != null && (toTail || quorum || delivered.countedByTheBroker())) {
            try {
                AMQP.BasicProperties properties = delivered.properties(false, null);
                delivered.tracker.publishConfirmed("", queue, properties, delivered.body(), CONFIRM_TIMEOUT);
                delivered.ack();
                return;
            } catch (Exception e) {
                LOG.warnf("Channel %s: could not republish a message to requeue it (%s); requeuing it as it is",
                        channel, e.toString());
            }
        }
        delivered.nack(true);
    }

    private void deadLetter(Delivered delivered, IdempotencyException outcome) {
        if (deadLetters == null || delivered.tracker == null) {
            delivered.nack(false); // the broker dead-letters the queue (a policy, or the queue's own arguments)
            return;
        }
        try {
            delivered.tracker.publishConfirmed(deadLetters.exchange(), deadLetters.routingKey(),
                    delivered.properties(true, outcome), delivered.body(), CONFIRM_TIMEOUT);
        } catch (Exception e) {
            // Not acknowledged: it comes back after the delay, its key still dead-lettered, and is dead-lettered again.
            LOG.errorf("Channel %s: could not dead-letter a message to exchange '%s' (%s); it is kept in the queue and"
                    + " dead-lettered again after %d ms", channel, deadLetters.exchange(), e.toString(),
                    deliveries.requeueDelay().toMillis());
            after(delivered.context, deliveries.requeueDelay(), null, () -> blocking(() -> requeue(delivered, false)));
            return;
        }
        delivered.ack();
    }

    // Runs once: after the delay, or as soon as `sooner` completes.
    private static void after(Context context, Duration delay, CompletionStage<Void> sooner, Runnable action) {
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

    // AMQP channel calls block: never on the event loop.
    private static void blocking(Runnable work) {
        Infrastructure.getDefaultWorkerPool().execute(work);
    }

    /** A message, the AMQP channel that delivered it, and what to publish a copy of it with. */
    private final class Delivered {
        final IncomingRabbitMQMessage<?> message;
        final Context context;
        final RabbitMQConsumerChannels.Tracker tracker;
        final Channel deliveredOn;
        final long deliveryTag;

        Delivered(IncomingRabbitMQMessage<?> message, Context context) {
            this.message = message;
            this.context = context;
            this.tracker = consumers.of(connectorChannel);
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

        AMQP.BasicProperties properties(boolean deadLetter, IdempotencyException outcome) {
            return deadLetter ? DeadLetterTarget.properties(message, channel, outcome) : DeadLetterTarget.requeued(message);
        }

        void ack() {
            settle(ch -> ch.basicAck(deliveryTag, false), IncomingRabbitMQMessage::acknowledgeMessage);
        }

        void nack(boolean requeue) {
            settle(ch -> ch.basicNack(deliveryTag, false, requeue), m -> m.rejectMessage(null, requeue));
        }

        // On the AMQP channel that delivered the message: once it closed, the broker requeued the message already,
        // and its delivery tag must not reach the channel that replaced it.
        private void settle(ChannelCall call, java.util.function.Consumer<IncomingRabbitMQMessage<?>> viaClient) {
            if (deliveredOn == null) {
                // no tracked channel (a client of the application's own options bean): the connector's client
                ClientHolder.runOnContext(context, message, viaClient);
                return;
            }
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
    }

    @FunctionalInterface
    private interface ChannelCall {
        void run(Channel channel) throws Exception;
    }
}
