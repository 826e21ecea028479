package io.quarkiverse.idempotency.runtime;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.Idempotency;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkiverse.idempotency.MessageIdKey;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/**
 * The programmatic form: one lease-mode {@link Delivery} per call.
 */
@Singleton
public class ProgrammaticIdempotency implements Idempotency {

    private final Deliveries deliveries;
    private final IdempotencyConfig config;
    private final KeyFunction<Object> messageIds;
    private final Map<String, MethodPlan> plans = new ConcurrentHashMap<>();

    @Inject
    public ProgrammaticIdempotency(Deliveries deliveries, IdempotencyConfig config, MessageIdKey messageIds) {
        this.deliveries = deliveries;
        this.config = config;
        this.messageIds = messageIds;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> CompletionStage<Void> handle(Message<T> message, String scope, KeyFunction<? super T> key,
            Consumer<? super T> handler) {
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(handler, "handler");
        if (scope == null || scope.isBlank()) {
            throw new IllegalArgumentException("scope must not be blank");
        }
        MethodPlan scoped = plans.computeIfAbsent(scope, this::plan);
        MethodPlan plan = key == null ? scoped
                : new MethodPlan(scoped.description(), scoped.singleChannel(), scoped.scope(), (KeyFunction<Object>) key,
                        scoped.mode(), scoped.policies(), scoped.returns(), true, false, false, false);
        return Uni.createFrom().item(() -> run(plan, scope, message, handler))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .chain(stage -> Uni.createFrom().completionStage(stage))
                .subscribeAsCompletionStage();
    }

    private MethodPlan plan(String scope) {
        IdempotentMethodInfo info = new IdempotentMethodInfo("Idempotency.handle(scope=" + scope + ")", List.of(scope),
                "", MessageIdKey.class.getName(), IdempotencyMode.LEASE, "", "", 0,
                IdempotentMethodInfo.Returns.COMPLETION_STAGE, true, false, false);
        return new MethodPlan(info.getDescription(), scope, scope, messageIds, IdempotencyMode.LEASE,
                Map.of(scope, IdempotentMethods.policy(info, scope, config)), info.getReturns(), true, false, false,
                false);
    }

    private <T> CompletionStage<Void> run(MethodPlan plan, String scope, Message<T> message,
            Consumer<? super T> handler) {
        Delivery delivery;
        try {
            delivery = deliveries.start(plan, scope, message.getPayload(), message);
            if (delivery.isDuplicate() || !Blocking.await(delivery, delivery::claim)) {
                return message.ack();
            }
        } catch (IdempotencyException e) {
            return message.nack(e);
        }
        try {
            handler.accept(message.getPayload());
        } catch (RuntimeException | Error e) {
            return message.nack(Blocking.await(delivery, () -> delivery.failed(e)));
        }
        try {
            Blocking.await(delivery, delivery::succeeded);
        } catch (IdempotencyException e) {
            return message.nack(e);
        }
        return message.ack();
    }
}
