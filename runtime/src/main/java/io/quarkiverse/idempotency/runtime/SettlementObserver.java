package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.smallrye.mutiny.Uni;

/**
 * Wraps the message handed to a {@code Message}-taking {@code @Idempotent} method, so that its ack confirms the key
 * before the broker sees the ack, and its nack forgets the key before the broker sees the nack.
 */
final class SettlementObserver {

    private SettlementObserver() {
    }

    static <T> Message<T> observe(Message<T> message, Delivery delivery, IdempotencyGuard guard) {
        return message
                .withAckWithMetadata(metadata -> Blocking.call(() -> {
                    guard.succeeded(delivery);
                    return null;
                }).onItemOrFailure().transformToUni((ignored, failure) -> failure == null
                        ? Uni.createFrom().completionStage(() -> message.ack(metadata))
                        : Uni.createFrom().completionStage(() -> message.nack(failure, metadata)))
                        .subscribeAsCompletionStage())
                .withNackWithMetadata((reason, metadata) -> Blocking.call(() -> {
                    guard.failed(delivery, reason);
                    return null;
                }).chain(() -> Uni.createFrom().completionStage(() -> message.nack(reason, metadata)))
                        .subscribeAsCompletionStage());
    }
}
