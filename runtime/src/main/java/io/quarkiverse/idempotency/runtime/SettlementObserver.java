package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.smallrye.mutiny.Uni;

/**
 * Wraps a message so that its ack confirms the delivery's key before the broker sees the ack, and its nack counts the
 * attempt and hands the broker the delivery's outcome instead of the bare reason. Used for the message handed to a
 * {@code Message}-taking {@code @Idempotent} method, and for a processor's input, which SmallRye acknowledges once
 * the processor's output is acknowledged downstream.
 */
final class SettlementObserver {

    private SettlementObserver() {
    }

    /**
     * @param delivery the message's delivery; when it answers {@code null} (the message never reached the method),
     *        acks and nacks pass through unchanged
     */
    static <T> Message<T> observe(Message<T> message, Supplier<Delivery> delivery) {
        return observe(message, delivery, () -> true);
    }

    /**
     * @param settle answers whether this acknowledgement settles the message: {@code false} when it was settled already
     *        (a processor's input nacked when its output-ack timeout passed), and then nothing happens
     */
    static <T> Message<T> observe(Message<T> message, Supplier<Delivery> delivery, BooleanSupplier settle) {
        return message
                .withAckWithMetadata(metadata -> {
                    Delivery d = delivery.get();
                    if (d == null) {
                        return message.ack(metadata);
                    }
                    if (!settle.getAsBoolean()) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return d.succeeded().onItemOrFailure().transformToUni((ignored, failure) -> failure == null
                            ? Uni.createFrom().completionStage(() -> message.ack(metadata))
                            : Uni.createFrom().completionStage(() -> message.nack(failure, metadata)))
                            .subscribeAsCompletionStage();
                })
                .withNackWithMetadata((reason, metadata) -> {
                    Delivery d = delivery.get();
                    if (d == null) {
                        return message.nack(reason, metadata);
                    }
                    if (!settle.getAsBoolean()) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return d.failed(reason)
                            .chain(outcome -> Uni.createFrom().completionStage(() -> message.nack(outcome, metadata)))
                            .subscribeAsCompletionStage();
                });
    }
}
