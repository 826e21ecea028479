package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;
import java.util.function.Supplier;

import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;

/**
 * A message to dead-letter, published to the queue's dead-letter exchange as a copy (body, properties but a
 * per-message expiration, the reason in headers) with publisher confirms, and acknowledged only once the broker
 * confirmed that it routed the copy; a copy it cannot route or take leaves the message to come back after the requeue
 * delay, never lost. When the broker dead-letters the queue itself (a policy), the message is rejected without
 * requeue.
 *
 * @param target where dead letters are published, or {@code null} to reject them to the broker's own dead-lettering
 * @param requeue where a message goes when its copy could not be published
 */
record DeadLetterPublish(String channel, DeadLetterTarget target, Requeue requeue, Supplier<Duration> requeueDelay,
        Duration confirmTimeout) {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(DeadLetterPublish.class);

    /** Dead-letters the message; blocks on the broker's confirm (never call it on the event loop). */
    void deadLetter(DeliveredMessage delivered, IdempotencyException outcome) {
        if (target == null || delivered.tracker == null) {
            delivered.nack(false); // the broker dead-letters the queue (a policy, or the queue's own arguments)
            return;
        }
        try {
            delivered.tracker.publishConfirmed(target.exchange(), target.routingKey(), delivered.deadLettered(outcome),
                    delivered.body(), confirmTimeout);
        } catch (Exception e) {
            // Not acknowledged: it comes back after the delay, its key still dead-lettered, and is dead-lettered again.
            Duration delay = requeueDelay.get();
            LOG.deadLetterNotPublished(channel, target.exchange(), e.toString(), delay.toMillis());
            requeue.after(delivered, delay);
            return;
        }
        delivered.ack();
    }
}
