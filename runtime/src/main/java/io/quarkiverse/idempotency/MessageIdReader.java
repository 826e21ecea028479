package io.quarkiverse.idempotency;

import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Reads a connector's message id from message metadata, for {@link MessageIdKey}. The extension registers one bean per
 * connector it supports (RabbitMQ's {@code message_id} property); an application may add its own for another
 * connector or a header of its own.
 */
public interface MessageIdReader {

    /**
     * @return the message id, or {@code null} when this connector's metadata is absent or carries none
     */
    String messageId(Metadata metadata);
}
