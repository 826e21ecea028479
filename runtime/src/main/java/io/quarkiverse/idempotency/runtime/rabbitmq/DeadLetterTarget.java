package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.util.HashMap;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BasicProperties;

import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.DeadLetterHeaders;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;

/**
 * Where a channel's dead letters go when the connector set the queue's dead-lettering up ({@code auto-bind-dlq}): the
 * dead-letter exchange and routing key the queue was declared with. A dead letter is published there as a copy of the
 * message (body and properties) with the {@link DeadLetterHeaders}, confirmed by the broker, then the message is
 * acknowledged.
 *
 * @param exchange the dead-letter exchange
 * @param routingKey the routing key that reaches the dead-letter queue
 */
record DeadLetterTarget(String exchange, String routingKey) {

    /**
     * @return the message's properties with its headers and the dead-letter headers, but no per-message expiration: a
     *         dead letter must not expire out of the dead-letter queue (RabbitMQ's own dead-lettering drops it too)
     */
    static AMQP.BasicProperties properties(IncomingRabbitMQMessage<?> message, String channel,
            IdempotencyException reason) {
        BasicProperties source = message.getRabbitMQMessage().properties();
        Map<String, Object> headers = headers(source);
        headers.putAll(DeadLetterHeaders.of(channel, reason));
        return copy(source).expiration(null).headers(headers).build();
    }

    /**
     * @return the message's properties for a copy that requeues it, counting the requeues in
     *         {@value RabbitMQConnectorSupport#REQUEUED}
     */
    static AMQP.BasicProperties requeued(IncomingRabbitMQMessage<?> message) {
        BasicProperties source = message.getRabbitMQMessage().properties();
        Map<String, Object> headers = headers(source);
        Object before = headers.get(RabbitMQConnectorSupport.REQUEUED);
        headers.put(RabbitMQConnectorSupport.REQUEUED, before instanceof Number n ? n.intValue() + 1 : 1);
        return copy(source).headers(headers).build();
    }

    private static Map<String, Object> headers(BasicProperties source) {
        return new HashMap<>(source.getHeaders() == null ? Map.of() : source.getHeaders());
    }

    private static AMQP.BasicProperties.Builder copy(BasicProperties source) {
        return source instanceof AMQP.BasicProperties amqp ? amqp.builder()
                : new AMQP.BasicProperties.Builder().contentType(source.getContentType())
                        .contentEncoding(source.getContentEncoding()).deliveryMode(source.getDeliveryMode())
                        .messageId(source.getMessageId()).correlationId(source.getCorrelationId())
                        .type(source.getType()).timestamp(source.getTimestamp()).appId(source.getAppId())
                        .expiration(source.getExpiration()).priority(source.getPriority());
    }
}
