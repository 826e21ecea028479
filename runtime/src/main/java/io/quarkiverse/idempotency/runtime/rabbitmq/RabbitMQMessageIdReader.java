package io.quarkiverse.idempotency.runtime.rabbitmq;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.MessageIdReader;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

/**
 * The RabbitMQ {@code message_id} property. Registered only when the RabbitMQ connector is present.
 */
@Singleton
public class RabbitMQMessageIdReader implements MessageIdReader {

    @Override
    public String messageId(Metadata metadata) {
        for (Object m : metadata) {
            if (m instanceof IncomingRabbitMQMetadata rabbit) {
                return rabbit.getMessageId().orElse(null);
            }
        }
        return null;
    }
}
