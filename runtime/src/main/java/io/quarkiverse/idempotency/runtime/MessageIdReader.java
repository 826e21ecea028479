package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Reads a connector's message id from message metadata. One bean per connector present in the application, registered
 * at build time.
 */
public interface MessageIdReader {

    /**
     * @return the message id, or {@code null} when this connector's metadata is absent or carries none
     */
    String messageId(Metadata metadata);
}
