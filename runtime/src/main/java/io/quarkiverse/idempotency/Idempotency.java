package io.quarkiverse.idempotency;

import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.runtime.Delivery;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyGuard;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;
import io.quarkiverse.idempotency.runtime.MethodPlan;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/**
 * The programmatic form of {@link Idempotent}, for code that composes its own pipeline, with the same semantics:
 *
 * <pre>
 * &#64;Incoming("payments")
 * CompletionStage&lt;Void&gt; consume(Message&lt;Payment&gt; message) {
 *     return idempotency.handle(message, "payments", (payment, metadata) -&gt; "charge:" + payment.orderId(),
 *             payment -&gt; payments.charge(payment));
 * }
 * </pre>
 *
 * The key is claimed before the handler runs; a duplicate is acked without running it; a delivery in progress
 * elsewhere, a missing key and a store failure nack the message with the corresponding {@link IdempotencyException};
 * a handler failure forgets the claim and nacks the message with the handler's exception. The handler runs on a
 * worker thread. The key is confirmed after the handler returns, on its own: for a confirm inside a transaction, use
 * {@link Idempotent} on a {@code @Transactional} method.
 */
@Singleton
public class Idempotency {

    private final IdempotencyGuard guard;
    private final IdempotencyConfig config;

    @Inject
    public Idempotency(IdempotencyGuard guard, IdempotencyConfig config) {
        this.guard = guard;
        this.config = config;
    }

    /**
     * Handles a message at most once per key, keyed by the broker's message id.
     *
     * @param message the message; it is acked or nacked by this method
     * @param scope the scope of the key (by convention the channel name)
     * @param handler the work, run at most once per key
     * @return completes when the message is acked or nacked
     */
    public <T> CompletionStage<Void> handle(Message<T> message, String scope, Consumer<? super T> handler) {
        return handle(message, scope, null, handler);
    }

    /**
     * Handles a message at most once per key.
     *
     * @param message the message; it is acked or nacked by this method
     * @param scope the scope of the key (by convention the channel name)
     * @param key the key function, or {@code null} for the broker's message id
     * @param handler the work, run at most once per key
     * @return completes when the message is acked or nacked
     */
    @SuppressWarnings("unchecked")
    public <T> CompletionStage<Void> handle(Message<T> message, String scope, KeyFunction<? super T> key,
            Consumer<? super T> handler) {
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(handler, "handler");
        if (scope == null || scope.isBlank()) {
            throw new IllegalArgumentException("scope must not be blank");
        }
        KeyFunction<Object> keyFunction = key == null ? null : (KeyFunction<Object>) key;
        MethodPlan plan = new MethodPlan("Idempotency.handle(scope=" + scope + ")", scope, scope,
                keyFunction == null ? (payload, metadata) -> guard.messageId(metadata) : keyFunction,
                config.retention(), config.claimTimeout(), IdempotentMethodInfo.Returns.COMPLETION_STAGE, true, false, false,
                false);
        return Uni.createFrom().item(() -> run(plan, message, handler))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .chain(stage -> Uni.createFrom().completionStage(stage))
                .subscribeAsCompletionStage();
    }

    private <T> CompletionStage<Void> run(MethodPlan plan, Message<T> message, Consumer<? super T> handler) {
        Delivery delivery;
        try {
            delivery = guard.begin(plan, plan.scope(), message.getPayload(), message.getMetadata());
        } catch (IdempotencyException e) {
            return message.nack(e);
        }
        switch (delivery.claim()) {
            case DONE:
                return message.ack();
            case BUSY:
                return message.nack(new DeliveryInProgressException(delivery.key()));
            default:
                break;
        }
        try {
            handler.accept(message.getPayload());
        } catch (RuntimeException | Error e) {
            guard.failed(delivery, e);
            return message.nack(e);
        }
        try {
            guard.succeeded(delivery);
        } catch (RuntimeException e) {
            return message.nack(e);
        }
        return message.ack();
    }
}
