package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BasicProperties;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.KeyMissingException;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;

/**
 * Where a channel's dead letters go when the connector set the queue's dead-lettering up ({@code auto-bind-dlq}): the
 * dead-letter exchange and routing key the queue was declared with. A dead letter is published there as a copy of the
 * message (body and properties) with headers saying why, then the message is acknowledged.
 *
 * @param exchange the dead-letter exchange
 * @param routingKey the routing key that reaches the dead-letter queue
 */
record DeadLetterTarget(String exchange, String routingKey) {

    /** Header: why the message was dead-lettered (the failure's class and message). */
    static final String REASON = "x-idempotency-reason";
    /** Header: the failure's exception class. */
    static final String EXCEPTION = "x-idempotency-exception";
    /** Header: which outcome dead-lettered it ({@code dead-lettered}, {@code key-missing}, {@code unreadable}). */
    static final String OUTCOME = "x-idempotency-outcome";
    /** Header: how many attempts failed, for a spent budget. */
    static final String ATTEMPTS = "x-idempotency-attempts";
    /** Header: the idempotency key, when one was computed. */
    static final String KEY = "x-idempotency-key";
    /** Header: the channel that consumed it. */
    static final String CHANNEL = "x-idempotency-channel";
    /** Header: when it was dead-lettered, ISO-8601. */
    static final String DEAD_LETTERED_AT = "x-idempotency-dead-lettered-at";

    private static final int MAX_HEADER = 1000;

    /** @return the message's properties with its headers and the dead-letter headers */
    static AMQP.BasicProperties properties(IncomingRabbitMQMessage<?> message, String channel, String outcome,
            IdempotencyException reason) {
        BasicProperties source = message.getRabbitMQMessage().properties();
        AMQP.BasicProperties.Builder builder = source instanceof AMQP.BasicProperties amqp ? amqp.builder()
                : new AMQP.BasicProperties.Builder().contentType(source.getContentType())
                        .contentEncoding(source.getContentEncoding()).deliveryMode(source.getDeliveryMode())
                        .messageId(source.getMessageId()).correlationId(source.getCorrelationId())
                        .type(source.getType()).timestamp(source.getTimestamp()).appId(source.getAppId());
        Map<String, Object> headers = new HashMap<>(source.getHeaders() == null ? Map.of() : source.getHeaders());
        Throwable cause = reason.getCause() != null ? reason.getCause() : reason;
        // the handler's or the conversion's own failure; for a missing key, the extension's explanation
        headers.put(REASON, truncate(reason instanceof KeyMissingException ? reason.getMessage() : String.valueOf(cause)));
        headers.put(EXCEPTION, cause.getClass().getName());
        headers.put(OUTCOME, outcome);
        headers.put(CHANNEL, channel);
        headers.put(DEAD_LETTERED_AT, Instant.now().toString());
        if (reason.key() != null) {
            headers.put(KEY, truncate(reason.key().toString()));
        }
        if (reason instanceof AttemptsExhaustedException exhausted) {
            headers.put(ATTEMPTS, exhausted.attempts());
        }
        return builder.headers(headers).build();
    }

    private static String truncate(String value) {
        return value.length() <= MAX_HEADER ? value : value.substring(0, MAX_HEADER);
    }
}
