package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.rabbitmq.client.Channel;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;

/**
 * A message to try again later: it waits for its delay unacknowledged (or, when a delivery of this process holds its
 * key, until that delivery ends), then goes back to the queue: rejected with requeue on the AMQP channel that
 * delivered it; on a quorum queue, whose delivery limit counts every such return, republished with publisher confirms
 * and then acknowledged, so that a busy key or a store outage never spends the broker's limit. When the channel has a
 * prefetch, at most half of it waits there: past that, a message waits in the {@link WaitQueue} (a copy published with
 * publisher confirms, then the message acknowledged), and the waiting ones go back to the back of the queue, not to the
 * front, where they and their like would be taken again before the others; so waiting messages never stall the ones
 * behind them, and none comes back before its delay.
 */
final class Requeue {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(Requeue.class);

    private final String channel;
    private final String queue;
    private final boolean quorum;
    private final int prefetch;
    private final Duration confirmTimeout;
    private final Map<Channel, AtomicInteger> waiting = new ConcurrentHashMap<>();
    private final WaitQueue waitQueue;

    /**
     * @param quorum whether the queue is a quorum queue, whose delivery limit counts every requeue
     * @param prefetch the channel's prefetch ({@code max-outstanding-messages}), or 0 when it has none
     */
    Requeue(String channel, String queue, boolean quorum, int prefetch, Duration confirmTimeout) {
        this.channel = channel;
        this.queue = queue;
        this.quorum = quorum;
        this.prefetch = prefetch;
        this.confirmTimeout = confirmTimeout;
        this.waitQueue = new WaitQueue(channel, queue);
    }

    /**
     * Sends the message back to the queue after its delay, or as soon as {@code sooner} completes. The channel does not
     * wait for it: this returns at once, so one waiting message does not hold up the ones behind it.
     */
    void later(DeliveredMessage delivered, Duration delay, CompletionStage<Void> sooner) {
        AtomicInteger held = waiting(delivered);
        if (held != null && held.incrementAndGet() > Math.max(1, prefetch / 2) && sooner == null) {
            // Half the prefetch waits already: this one waits in the wait queue, so that the messages behind it keep
            // the other half. (One whose key a delivery of this process holds waits here: it comes back as soon as
            // that delivery ended, which a copy in the wait queue could not.)
            held.decrementAndGet();
            DeliveredMessage.blocking(() -> park(delivered, delay, held));
            return;
        }
        waitInPlace(delivered, delay, sooner, held);
    }

    /** Sends the message back to the queue as it is, after the delay. */
    void after(DeliveredMessage delivered, Duration delay) {
        waitInPlace(delivered, delay, null, null);
    }

    // Unacknowledged, for its delay (or until the local holder of its key ended); then back to the queue.
    private void waitInPlace(DeliveredMessage delivered, Duration delay, CompletionStage<Void> sooner,
            AtomicInteger held) {
        delivered.after(delay, sooner, () -> DeliveredMessage.blocking(() -> {
            if (held != null) {
                held.decrementAndGet();
            }
            requeue(delivered, held != null);
        }));
    }

    private void park(DeliveredMessage delivered, Duration delay, AtomicInteger held) {
        try {
            if (waitQueue.park(delivered.tracker, delivered.message, delay, confirmTimeout)) {
                delivered.ack();
                return;
            }
        } catch (Exception e) {
            LOG.debugf("Channel %s: could not put a message in %s (%s); it waits where it is", channel,
                    waitQueue.name(), e.toString());
        }
        held.incrementAndGet();
        waitInPlace(delivered, delay, null, held);
    }

    // How many messages delivered on the message's AMQP channel wait to come back, when the channel has a prefetch:
    // each of them holds a slot of it.
    private AtomicInteger waiting(DeliveredMessage delivered) {
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
    private void requeue(DeliveredMessage delivered, boolean toTail) {
        if (delivered.tracker != null && (toTail || quorum || delivered.countedByTheBroker())) {
            try {
                delivered.tracker.publishConfirmed("", queue, delivered.requeued(), delivered.body(), confirmTimeout);
                delivered.ack();
                return;
            } catch (Exception e) {
                LOG.requeueRepublishFailed(channel, e.toString());
            }
        }
        delivered.nack(true);
    }
}
