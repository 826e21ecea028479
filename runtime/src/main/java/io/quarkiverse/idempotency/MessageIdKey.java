package io.quarkiverse.idempotency;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkus.arc.All;

/**
 * The default key: the broker's message id.
 * <p>
 * Read from {@link MessageIdMetadata} when present, else from the connector's metadata (RabbitMQ: the
 * {@code message_id} property). A message without one is rejected without requeue.
 */
@Singleton
public class MessageIdKey implements KeyFunction<Object> {

    private final List<MessageIdReader> readers;

    @Inject
    public MessageIdKey(@All List<MessageIdReader> readers) {
        this.readers = List.copyOf(readers);
    }

    @Override
    public String key(Object payload, Metadata metadata) {
        for (Object m : metadata) {
            if (m instanceof MessageIdMetadata explicit) {
                return explicit.id();
            }
        }
        for (MessageIdReader reader : readers) {
            String id = reader.messageId(metadata);
            if (id != null) {
                return id;
            }
        }
        return null;
    }
}
