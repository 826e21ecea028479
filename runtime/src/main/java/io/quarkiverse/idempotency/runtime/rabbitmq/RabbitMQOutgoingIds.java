package io.quarkiverse.idempotency.runtime.rabbitmq;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.runtime.outbox.OutgoingIds;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;

/** An outbox message to RabbitMQ carries its id as the {@code message_id} property. */
@Singleton
public class RabbitMQOutgoingIds implements OutgoingIds {

    @Override
    public String connector() {
        return RabbitMQChannelCheck.CONNECTOR;
    }

    @Override
    public Stamp stamp(String channel) {
        return RabbitMQOutgoingIds::with;
    }

    private static Metadata with(Metadata metadata, String messageId, String key) {
        OutgoingRabbitMQMetadata.Builder message = OutgoingRabbitMQMetadata.builder().withMessageId(messageId);
        if (key != null) {
            message.withRoutingKey(key);
        }
        return metadata.with(message.build());
    }

    @Override
    public String unconfirmed(String channel) {
        String property = "mp.messaging.outgoing." + channel + ".publish-confirms";
        boolean confirms = ConfigProvider.getConfig().getOptionalValue(property, Boolean.class).orElse(false);
        return confirms ? null
                : property + " is false: the connector would count a message as sent before RabbitMQ confirmed it, and"
                        + " the outbox would delete it then. Remove the setting (the extension sets it for outbox"
                        + " channels) or set it to true";
    }
}
