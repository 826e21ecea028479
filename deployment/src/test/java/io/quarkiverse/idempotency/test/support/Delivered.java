package io.quarkiverse.idempotency.test.support;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.MessageIdMetadata;

/**
 * A message for the in-memory connector that records how the application settled it.
 */
public final class Delivered<T> {

    private final AtomicInteger acks = new AtomicInteger();
    private final List<Throwable> nacks = new CopyOnWriteArrayList<>();
    private final Message<T> message;

    private Delivered(T payload, Metadata metadata) {
        this.message = Message.of(payload, metadata, () -> {
            acks.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }, reason -> {
            nacks.add(reason);
            return CompletableFuture.completedFuture(null);
        });
    }

    /** @return a message with the given message id */
    public static <T> Delivered<T> withId(String id, T payload) {
        return new Delivered<>(payload, Metadata.of(new MessageIdMetadata(id)));
    }

    /** @return a message without any message id */
    public static <T> Delivered<T> withoutId(T payload) {
        return new Delivered<>(payload, Metadata.empty());
    }

    public Message<T> message() {
        return message;
    }

    public int acks() {
        return acks.get();
    }

    public List<Throwable> nacks() {
        return nacks;
    }

    public boolean settled() {
        return acks.get() + nacks.size() > 0;
    }

    @Override
    public String toString() {
        return "Delivered[acks=" + acks + ", nacks=" + nacks + "]";
    }
}
