package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;
import java.util.Map;

import com.rabbitmq.client.AMQP;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;

/**
 * Where a message waits out its delay without holding a slot of the consumer's prefetch: the queue
 * {@code <queue>.idempotency-wait}, which the extension declares when it first needs it. A copy published there expires
 * after its delay and the broker dead-letters it back to the consumer's queue, at least once (a quorum queue with
 * {@code x-dead-letter-strategy=at-least-once}, which keeps a message until the queue it goes back to confirmed it).
 * Copies of different delays expire in the order they came (a queue expires its head first), so a delay is a lower bound.
 */
final class WaitQueue {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(WaitQueue.class);
    static final String SUFFIX = ".idempotency-wait";

    private final String channel;
    private final String target;
    private final String name;
    private volatile boolean declared;
    private volatile boolean refused;

    /** @param target the consumer's queue, where waiting messages come back */
    WaitQueue(String channel, String target) {
        this.channel = channel;
        this.target = target;
        this.name = target + SUFFIX;
    }

    String name() {
        return name;
    }

    /**
     * Publishes a copy of the message to wait for {@code delay}, with publisher confirms.
     *
     * @return {@code false} when the wait queue cannot be used (the broker refused to declare it): the caller keeps the
     *         message waiting where it is
     * @throws Exception when the copy was not confirmed
     */
    boolean park(RabbitMQConsumerChannels.Tracker tracker, IncomingRabbitMQMessage<?> message, Duration delay,
            Duration confirmTimeout) throws Exception {
        if (refused || !declared(tracker)) {
            return false;
        }
        AMQP.BasicProperties properties = DeadLetterTarget.requeued(message).builder()
                .expiration(String.valueOf(Math.max(1, delay.toMillis()))).build();
        tracker.publishConfirmed("", name, properties, message.getRabbitMQMessage().body().getBytes(), confirmTimeout);
        return true;
    }

    private boolean declared(RabbitMQConsumerChannels.Tracker tracker) {
        if (declared) {
            return true;
        }
        try {
            tracker.declare(name, Map.of("x-queue-type", "quorum", "x-overflow", "reject-publish",
                    "x-dead-letter-strategy", "at-least-once", "x-dead-letter-exchange", "",
                    "x-dead-letter-routing-key", target));
            declared = true;
        } catch (Exception e) {
            refused = true;
            LOG.waitQueueNotDeclared(channel, name, e.toString(), target);
        }
        return declared;
    }
}
