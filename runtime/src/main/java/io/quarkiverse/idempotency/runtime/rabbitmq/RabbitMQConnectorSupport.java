package io.quarkiverse.idempotency.runtime.rabbitmq;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.runtime.ConnectorSupport;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

/**
 * A RabbitMQ message may have been delivered before when the broker says so ({@code redelivered}, set on every
 * requeue and on every message a closed channel held), when a quorum queue counted earlier deliveries
 * ({@code x-delivery-count}), or when the extension republished it to requeue it ({@value #REQUEUED}).
 */
@Singleton
public class RabbitMQConnectorSupport implements ConnectorSupport {

    /** Header: how many times the extension republished the message to requeue it. */
    public static final String REQUEUED = "x-idempotency-requeued";

    @Override
    public boolean mayBeRedelivered(Message<?> message) {
        IncomingRabbitMQMetadata rabbit = message.getMetadata(IncomingRabbitMQMetadata.class).orElse(null);
        if (rabbit == null) {
            return false;
        }
        return rabbit.isRedeliver() || rabbit.getHeaders().containsKey(REQUEUED)
                || rabbit.getHeader("x-delivery-count", Number.class).map(n -> n.longValue() > 0).orElse(false);
    }

    /** RabbitMQ flags every message it delivered before, and the extension's requeues carry their header. */
    @Override
    public Boolean redelivered(Message<?> message) {
        return message.getMetadata(IncomingRabbitMQMetadata.class).isPresent() ? mayBeRedelivered(message) : null;
    }

    @Override
    public byte[] body(Message<?> message) {
        return message instanceof IncomingRabbitMQMessage<?> rabbit ? rabbit.getRabbitMQMessage().body().getBytes()
                : null;
    }
}
