package io.quarkiverse.idempotency.runtime.kafka;

import java.nio.charset.StandardCharsets;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.apache.kafka.common.header.Header;
import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.UnreadablePayloadException;
import io.quarkiverse.idempotency.runtime.ChannelNames;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.smallrye.mutiny.Multi;
import io.smallrye.reactive.messaging.PublisherDecorator;
import io.smallrye.reactive.messaging.kafka.DeserializationFailureHandler;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;

/**
 * Dead-letters at once a record of an {@code @Idempotent} Kafka channel whose key or value its deserializer could not
 * read (not JSON, the wrong shape): retrying cannot help. The build sets {@code fail-on-deserialization-failure=false}
 * on those channels, so the connector hands such a record over with a {@code null} payload and the failure in its
 * headers rather than stop the channel; it is nacked here, before the method, as unreadable, and the channel's failure
 * strategy publishes it to the dead-letter topic with the reason. Registered only when the Kafka connector is present.
 */
// No qualifier: the channel factory looks decorators up with the @Default qualifier.
@ApplicationScoped
public class UnreadableRecords implements PublisherDecorator {

    @Inject
    IdempotentMethods methods;

    @Inject
    Deliveries deliveries;

    @Override
    public Multi<? extends Message<?>> decorate(Multi<? extends Message<?>> publisher, List<String> channelNames,
            boolean isConnector) {
        if (!isConnector) {
            return publisher;
        }
        for (String name : channelNames) {
            String channel = ChannelNames.incoming(name, methods.channels());
            if (channel != null && methods.retriesInPlace(channel)) {
                return publisher.filter(message -> readable(channel, message));
            }
        }
        return publisher;
    }

    private boolean readable(String channel, Message<?> message) {
        IncomingKafkaRecordMetadata<?, ?> record = message.getMetadata(IncomingKafkaRecordMetadata.class).orElse(null);
        if (record == null
                || record.getHeaders().lastHeader(DeserializationFailureHandler.DESERIALIZATION_FAILURE_DLQ) == null) {
            return true;
        }
        String part = record.getHeaders().lastHeader(DeserializationFailureHandler.DESERIALIZATION_FAILURE_IS_KEY) != null
                ? "key"
                : "value";
        String reason = "its " + part + " could not be deserialized by "
                + text(record.getHeaders().lastHeader(DeserializationFailureHandler.DESERIALIZATION_FAILURE_DESERIALIZER))
                + ": " + text(record.getHeaders().lastHeader(DeserializationFailureHandler.DESERIALIZATION_FAILURE_REASON));
        UnreadablePayloadException unreadable = new UnreadablePayloadException("The " + part + " of record "
                + record.getTopic() + "-" + record.getPartition() + "@" + record.getOffset() + " of channel " + channel
                + " could not be read for its @Idempotent method: " + reason, new IllegalArgumentException(reason));
        deliveries.unreadable(channel, message.getMetadata(), unreadable.getCause());
        message.nack(unreadable);
        return false;
    }

    private static String text(Header header) {
        return header == null || header.value() == null ? "?" : new String(header.value(), StandardCharsets.UTF_8);
    }

    @Override
    public int getPriority() {
        // After the connector's own decorators, before InboundMessages: the method never sees the record.
        return 900;
    }
}
