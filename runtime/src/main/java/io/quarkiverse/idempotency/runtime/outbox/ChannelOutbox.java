package io.quarkiverse.idempotency.runtime.outbox;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.MessageIdMetadata;
import io.quarkiverse.idempotency.OutboxEmitter;
import io.smallrye.reactive.messaging.EmitterConfiguration;
import io.smallrye.reactive.messaging.providers.extension.AbstractEmitter;

/**
 * The outbox of one channel, injected as its {@link OutboxEmitter}: a send writes a row, and the relay sends rows
 * downstream through the channel, as an emitter would, each message acknowledged when the connector has the broker's
 * confirm.
 */
final class ChannelOutbox<T> extends AbstractEmitter<T> implements OutboxEmitter<T> {

    private final Outbox outbox;
    private volatile OutgoingIds.Stamp ids;

    ChannelOutbox(EmitterConfiguration configuration, long defaultBufferSize, Outbox outbox) {
        super(configuration, defaultBufferSize);
        this.outbox = outbox;
    }

    String channel() {
        return name;
    }

    void idsBy(OutgoingIds.Stamp ids) {
        this.ids = ids;
    }

    @Override
    public String send(T payload) {
        return outbox.write(this, payload, null, null);
    }

    @Override
    public String send(T payload, String messageId) {
        return outbox.write(this, payload, checkedId(messageId), null);
    }

    @Override
    public String send(T payload, String messageId, String key) {
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("An outbox message's key is not blank, not '" + key + "': send(payload,"
                    + " messageId) sends one without a key");
        }
        return outbox.write(this, payload, messageId == null ? null : checkedId(messageId), key);
    }

    private static String checkedId(String messageId) {
        if (messageId == null || messageId.isBlank() || messageId.length() > 255) {
            throw new IllegalArgumentException("An outbox message id has 1 to 255 characters, not '" + messageId + "'");
        }
        return messageId;
    }

    /**
     * Sends a row's message downstream.
     *
     * @return completed when the connector acknowledged it (the broker confirmed it), failed when it was refused or
     *         could not be sent
     */
    @SuppressWarnings("unchecked")
    CompletionStage<Void> relay(OutboxRow row, Object payload) {
        CompletableFuture<Void> sent = new CompletableFuture<>();
        Metadata metadata = Metadata.of(new MessageIdMetadata(row.messageId()));
        OutgoingIds.Stamp connectorIds = ids;
        if (connectorIds != null) {
            metadata = connectorIds.with(metadata, row.messageId(), row.key());
        }
        Message<T> message = Message.of((T) payload, metadata, () -> {
            sent.complete(null);
            return CompletableFuture.completedFuture(null);
        }, failure -> {
            sent.completeExceptionally(failure);
            return CompletableFuture.completedFuture(null);
        });
        try {
            emit(message);
        } catch (RuntimeException e) {
            // no subscriber yet, the buffer full, the channel cancelled: the row waits for the relay
            sent.completeExceptionally(new NotSent(name, e));
        }
        return sent;
    }

    /** The channel did not take the message (no subscriber yet, its buffer full): not a refusal by the broker. */
    static final class NotSent extends RuntimeException {
        NotSent(String channel, RuntimeException cause) {
            super("channel " + channel + " did not take the message: " + cause.getMessage(), cause, false, false);
        }
    }
}
