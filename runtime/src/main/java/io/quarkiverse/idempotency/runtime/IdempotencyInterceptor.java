package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.arc.ArcInvocationContext;
import io.smallrye.mutiny.Uni;

/**
 * Claims the key of each delivery before an {@code @Idempotent} method runs, skips duplicates, and confirms or forgets
 * the claim after it.
 */
@Idempotent
@Interceptor
@Priority(IdempotencyInterceptor.PRIORITY)
public class IdempotencyInterceptor {

    /**
     * Just outside {@code @Transactional} (PLATFORM_BEFORE + 200), so the claim commits on its own before the handler's
     * transaction begins, and a rollback of that transaction cannot take the claim with it; Fault Tolerance
     * (PLATFORM_AFTER + 10) runs inside, so its retries happen within one claim.
     */
    public static final int PRIORITY = Interceptor.Priority.PLATFORM_BEFORE + 190;

    private final IdempotentMethods methods;
    private final IdempotencyGuard guard;

    @Inject
    public IdempotencyInterceptor(IdempotentMethods methods, IdempotencyGuard guard) {
        this.methods = methods;
        this.guard = guard;
    }

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        IdempotentMethodIndex index = ArcInvocationContext.findIterceptorBinding(ic, IdempotentMethodIndex.class);
        MethodPlan plan = methods.plan(index.value());
        if (plan.messageParameter()) {
            return aroundMessage(ic, plan);
        }
        InboundMessage inbound = InboundMessages.current();
        if (inbound == null) {
            throw new IllegalStateException("@Idempotent " + plan.description() + " cannot find the message being"
                    + " handled: it is not running on the message's Vert.x context. For the in-memory connector set"
                    + " mp.messaging.incoming.<channel>.run-on-vertx-context=true");
        }
        return switch (plan.returns()) {
            case SYNC -> aroundSync(ic, plan, inbound);
            case UNI -> aroundUni(ic, plan, inbound);
            case COMPLETION_STAGE -> aroundUni(ic, plan, inbound).subscribeAsCompletionStage();
        };
    }

    private Object aroundSync(InvocationContext ic, MethodPlan plan, InboundMessage inbound) throws Exception {
        Message<?> message = inbound.message();
        Delivery delivery = guard.claimsInTransaction(plan)
                ? guard.prepareInTransaction(plan, inbound.channel(), message.getPayload(), message.getMetadata())
                : guard.begin(plan, inbound.channel(), message.getPayload(), message.getMetadata());
        if (delivery.claim() == ClaimResult.DONE) {
            // a processor returning null emits nothing and acks the message
            return null;
        }
        if (delivery.claim() == ClaimResult.BUSY) {
            throw new DeliveryInProgressException(delivery.key());
        }
        Object result;
        ic.getContextData().put(Delivery.CONTEXT_KEY, delivery);
        try {
            result = ic.proceed();
        } catch (Throwable t) {
            guard.failed(delivery, t);
            throw t;
        }
        guard.succeeded(delivery);
        return result;
    }

    private Uni<Object> aroundUni(InvocationContext ic, MethodPlan plan, InboundMessage inbound) {
        Message<?> message = inbound.message();
        Delivery delivery;
        try {
            delivery = guard.begin(plan, inbound.channel(), message.getPayload(), message.getMetadata());
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        if (delivery.claim() == ClaimResult.DONE) {
            return Uni.createFrom().nullItem();
        }
        if (delivery.claim() == ClaimResult.BUSY) {
            return Uni.createFrom().failure(new DeliveryInProgressException(delivery.key()));
        }
        Uni<Object> handled;
        try {
            handled = toUni(ic.proceed());
        } catch (Throwable t) {
            guard.failed(delivery, t);
            return Uni.createFrom().failure(t);
        }
        return handled.onItemOrFailure().transformToUni((item, failure) -> Blocking.call(() -> {
            if (failure != null) {
                guard.failed(delivery, failure);
                throw rethrowable(failure);
            }
            guard.succeeded(delivery);
            return item;
        })).onCancellation().invoke(() -> guard.abandoned(delivery));
    }

    private Object aroundMessage(InvocationContext ic, MethodPlan plan) throws Exception {
        Message<?> message = (Message<?>) ic.getParameters()[0];
        String channel = plan.singleChannel();
        if (channel == null) {
            InboundMessage inbound = InboundMessages.current();
            channel = inbound == null ? null : inbound.channel();
        }
        CompletionStage<Void> outcome = handleMessage(ic, plan, message, channel);
        return plan.returns() == IdempotentMethodInfo.Returns.UNI ? Uni.createFrom().completionStage(outcome) : outcome;
    }

    private CompletionStage<Void> handleMessage(InvocationContext ic, MethodPlan plan, Message<?> message,
            String channel) {
        Delivery delivery;
        try {
            delivery = guard.begin(plan, channel, message.getPayload(), message.getMetadata());
        } catch (RuntimeException e) {
            return message.nack(e);
        }
        if (delivery.claim() == ClaimResult.DONE) {
            return message.ack();
        }
        if (delivery.claim() == ClaimResult.BUSY) {
            return message.nack(new DeliveryInProgressException(delivery.key()));
        }
        Message<?> observed = SettlementObserver.observe(message, delivery, guard);
        Object[] parameters = ic.getParameters().clone();
        parameters[0] = observed;
        ic.setParameters(parameters);
        Uni<Object> handled;
        try {
            handled = toUni(ic.proceed());
        } catch (Throwable t) {
            guard.failed(delivery, t);
            return message.nack(t);
        }
        // A handler whose stage fails without nacking is nacked by the mediator on the original message, which
        // this delivery does not see: forget the claim here too (settling twice is a no-op).
        return handled.onFailure().call(failure -> Blocking.call(() -> {
            guard.failed(delivery, failure);
            return null;
        })).onCancellation().invoke(() -> guard.abandoned(delivery)).replaceWithVoid().subscribeAsCompletionStage();
    }

    @SuppressWarnings("unchecked")
    private static Uni<Object> toUni(Object returned) {
        if (returned instanceof Uni<?> uni) {
            return (Uni<Object>) uni;
        }
        if (returned instanceof CompletionStage<?> stage) {
            return Uni.createFrom().completionStage((CompletionStage<Object>) stage);
        }
        return Uni.createFrom().item(returned);
    }

    private static RuntimeException rethrowable(Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new CompletionException(t);
    }
}
