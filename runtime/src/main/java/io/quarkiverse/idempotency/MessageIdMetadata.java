package io.quarkiverse.idempotency;

import java.util.Objects;

/**
 * Message metadata carrying a message id, read by {@link MessageIdKey} before any connector-specific metadata.
 * <p>
 * Attach it where a connector has no message id of its own, or in tests with the in-memory connector:
 * {@code Message.of(payload, Metadata.of(new MessageIdMetadata("m-1")))}.
 *
 * @param id the message id, not null
 */
public record MessageIdMetadata(String id) {

    public MessageIdMetadata {
        Objects.requireNonNull(id, "id");
    }
}
