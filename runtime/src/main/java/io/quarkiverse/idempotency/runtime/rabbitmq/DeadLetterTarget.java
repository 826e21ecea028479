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
 * message (body and properties) with the {@link DeadLetterHeaders}, then the message is acknowledged.
 *
 * @param exchange the dead-letter exchange
 * @param routingKey the routing key that reaches the dead-letter queue
 */
record DeadLetterTarget(String exchange, String routingKey) {

    /** @return the message's properties with its headers and the dead-letter headers */
    static AMQP.BasicProperties properties(IncomingRabbitMQMessage<?> message, String channel,
            IdempotencyException reason) {
        BasicProperties source = message.getRabbitMQMessage().properties();
        AMQP.BasicProperties.Builder builder = source instanceof AMQP.BasicProperties amqp ? amqp.builder()
                : new AMQP.BasicProperties.Builder().contentType(source.getContentType())
                        .contentEncoding(source.getContentEncoding()).deliveryMode(source.getDeliveryMode())
                        .messageId(source.getMessageId()).correlationId(source.getCorrelationId())
                        .type(source.getType()).timestamp(source.getTimestamp()).appId(source.getAppId());
        Map<String, Object> headers = new HashMap<>(source.getHeaders() == null ? Map.of() : source.getHeaders());
        headers.putAll(DeadLetterHeaders.of(channel, reason));
        return builder.headers(headers).build();
    }
}
