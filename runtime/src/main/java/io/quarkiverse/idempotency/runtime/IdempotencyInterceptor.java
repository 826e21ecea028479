package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.runtime.kafka.RetryInPlace;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * Starts a {@link Delivery} for each invocation of an {@code @Idempotent} method and acts on what its transitions
 * answer: skips duplicates, claims lease-mode keys before the method runs, and settles the delivery after it. For an
 * in-transaction method, {@link TransactionalDeliveryInterceptor} writes the key inside the method's transaction.
 */
@Idempotent
@Interceptor
@Priority(IdempotencyInterceptor.PRIORITY)
public class IdempotencyInterceptor {

    /**
     * Just outside {@code @Transactional} (PLATFORM_BEFORE + 200), so that a lease-mode claim commits on its own before
     * the method's transaction begins, a duplicate this process confirmed is skipped without opening one, and the
     * outcome is settled after that transaction committed or rolled back; Fault Tolerance (PLATFORM_AFTER + 10) runs
     * inside, so its retries happen within one delivery.
     */
    public static final int PRIORITY = Interceptor.Priority.PLATFORM_BEFORE + 190;

    @Inject
    IdempotentMethods methods;

    @Inject
    Deliveries deliveries;

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        MethodPlan plan = methods.plan(ic);
        if (plan.messageParameter()) {
            return aroundMessage(ic, plan);
        }
        InboundMessage inbound = InboundMessages.current();
        if (inbound == null) {
            throw new IllegalStateException("@Idempotent " + plan.description() + " cannot find the message being"
                    + " handled: it is not running on the message's Vert.x context. For the in-memory connector set"
                    + " mp.messaging.incoming.<channel>.run-on-vertx-context=true");
        }
        if (methods.retriesInPlace(inbound.channel())) {
            return aroundInPlace(ic, plan, inbound);
        }
        // The method's own argument: the payload after SmallRye's converters, as the key function expects it.
        Delivery delivery = deliveries.start(plan, inbound.channel(), ic.getParameters()[0],
                inbound.message());
        inbound.started(delivery);
        if (plan.onEventLoop() && Context.isOnEventLoopThread()) {
            Uni<Object> handled = onEventLoop(ic, delivery, inbound);
            return plan.returns() == IdempotentMethodInfo.Returns.UNI ? handled : handled.subscribeAsCompletionStage();
        }
        return switch (plan.returns()) {
            case SYNC -> aroundSync(ic, plan, delivery, inbound);
            case UNI -> plan.inReactiveTransaction() ? aroundReactive(ic, delivery, inbound)
                    : aroundUni(ic, plan, delivery);
            case COMPLETION_STAGE -> aroundUni(ic, plan, delivery).subscribeAsCompletionStage();
        };
    }

    /**
     * A method returning {@code Uni} or {@code CompletionStage} without {@code @Blocking}, on its event loop: its key is
     * claimed on a lease, confirmed, or its failure counted, by store calls that do not block
     * ({@link KeyCalls}); the method itself runs on the message's context, where it was called.
     */
    private static Uni<Object> onEventLoop(InvocationContext ic, Delivery delivery, InboundMessage inbound) {
        if (delivery.isDuplicate()) {
            return Uni.createFrom().nullItem();
        }
        Context context = Vertx.currentContext();
        return OnContext.resume(delivery.claim(), context, false).chain(run -> {
            if (!run) {
                return Uni.createFrom().nullItem();
            }
            // settled back on the message's context, wherever the method's stage completed
            return OnContext.resume(Attempts.attempt(ic).onItemOrFailure().transformToUni((item, failure) -> failure != null
                    ? failing(delivery.failed(failure))
                    : delivery.succeeded().map(ignored -> {
                        if (delivery.state() == DeliveryState.HANDLED) {
                            inbound.handled();
                        }
                        return item;
                    })), context);
        }).onCancellation().invoke(delivery::abandoned);
    }

    /**
     * A {@code @WithTransaction} method, on its event loop: {@link ReactiveDeliveryInterceptor} writes the key in its
     * transaction, so a handled message costs no store call here. The store is called apart (on a worker thread, and
     * back on the message's context after it) only where the blocking methods call it too: a message that may have been
     * delivered before, or a dead owner's claim, is claimed on a lease first, so that an attempt that dies is counted;
     * a failure is counted after the rollback.
     */
    private static Uni<Object> aroundReactive(InvocationContext ic, Delivery delivery, InboundMessage inbound) {
        if (delivery.isDuplicate()) {
            return Uni.createFrom().nullItem();
        }
        ic.getContextData().put(DeliveryHandOff.REACTIVE, delivery);
        Context context = Vertx.currentContext();
        Uni<Object> attempt = inbound.mayBeRedelivered() || delivery.changingKeyForm() ? onLease(ic, delivery, context)
                : Attempts.attempt(ic);
        return settled(attempt, ic, delivery, inbound, context).onCancellation().invoke(delivery::abandoned);
    }

    /**
     * The attempt's outcome, settled as a blocking method's is. A handled message takes one operator here (each one
     * costs a context capture per message): its key was written or confirmed in the transaction that committed.
     */
    private static Uni<Object> settled(Uni<Object> attempt, InvocationContext ic, Delivery delivery,
            InboundMessage inbound, Context context) {
        return attempt.onItemOrFailure().transformToUni((item, failure) -> {
            Runnable afterCommit = (Runnable) ic.getContextData().remove(DeliveryHandOff.AFTER_COMMIT);
            if (failure != null) {
                return failing(OnContext.resume(delivery.failed(failure), context));
            }
            DeliveryState state = delivery.state();
            if (state == DeliveryState.WRITTEN_IN_TRANSACTION || state == DeliveryState.CONFIRMED_IN_TRANSACTION) {
                // no store call: the key was written or confirmed in the transaction that committed
                if (afterCommit != null) {
                    afterCommit.run(); // the messages the method sent through outboxes
                }
                return delivery.succeeded().map(ignored -> {
                    inbound.handled();
                    return item;
                });
            }
            if (state == DeliveryState.EXPIRED) {
                // a dead owner's claim held the key: taken over on a lease, its attempt counted, then run again
                return settled(onLease(ic, delivery, context), ic, delivery, inbound, context);
            }
            return state.ended() ? Uni.createFrom().nullItem()
                    : OnContext.resume(delivery.succeeded().replaceWith(item), context);
        });
    }

    // Claims the key on a lease without blocking the event loop (through the reactive client, or else over JDBC on a
    // worker thread), then runs the method, back on the message's context, in a transaction that confirms the claim.
    private static Uni<Object> onLease(InvocationContext ic, Delivery delivery, Context context) {
        return OnContext.resume(delivery.claim(), context, false)
                .chain(run -> run ? Attempts.attempt(ic) : Uni.createFrom().nullItem());
    }

    // A channel that cannot requeue one message (Kafka): a delivery to retry is retried here (RetryInPlace).
    private Object aroundInPlace(InvocationContext ic, MethodPlan plan, InboundMessage inbound) throws Exception {
        return RetryInPlace.run(deliveries, () -> {
            Delivery delivery = deliveries.start(plan, inbound.channel(), ic.getParameters()[0], inbound.message());
            inbound.started(delivery);
            return delivery;
        }, inbound::stillOwned, delivery -> switch (plan.returns()) {
            case SYNC -> aroundSync(ic, plan, delivery, inbound);
            // a @Blocking method: its worker thread waits for the outcome, so that it can retry it
            case UNI -> Uni.createFrom().item(aroundUni(ic, plan, delivery).await().indefinitely());
            case COMPLETION_STAGE -> CompletableFuture.completedFuture(aroundUni(ic, plan, delivery).await().indefinitely());
        });
    }

    private Object aroundSync(InvocationContext ic, MethodPlan plan, Delivery delivery, InboundMessage inbound)
            throws Exception {
        // In-transaction methods write the key inside their transaction (the inner interceptor); every other method,
        // and a message that may have been delivered before (its attempt may have killed a process), claims it here
        // on a lease, committed on its own, so that an attempt that dies is counted.
        boolean leaseFirst = !plan.inTransaction() || inbound.mayBeRedelivered() || delivery.changingKeyForm();
        if (delivery.isDuplicate() || (leaseFirst && !Blocking.await(delivery, delivery::claim))) {
            return null; // a processor returning null emits nothing and acks the message
        }
        ic.getContextData().put(DeliveryHandOff.JTA, delivery);
        Object result = proceed(ic, delivery);
        if (delivery.state() == DeliveryState.EXPIRED) {
            // A dead owner's claim held the key: taken over on a lease, its attempt counted, outside the transaction
            // that found it; then the method runs in a transaction of its own.
            if (!Blocking.await(delivery, delivery::claim)) {
                return null;
            }
            result = proceed(ic, delivery);
        }
        if (plan.processor()) {
            delivery.awaitOutputAck();
            deliveries.awaitOutput(inbound, delivery);
            return result;
        }
        Blocking.await(delivery, delivery::succeeded);
        if (delivery.state() == DeliveryState.HANDLED) {
            inbound.handled();
        }
        return delivery.isDuplicate() ? null : result;
    }

    private static Object proceed(InvocationContext ic, Delivery delivery) throws Exception {
        try {
            return ic.proceed();
        } catch (Throwable t) {
            throw Blocking.await(delivery, () -> delivery.failed(t));
        }
    }

    private static Uni<Object> aroundUni(InvocationContext ic, MethodPlan plan, Delivery delivery) {
        try {
            if (delivery.isDuplicate() || !Blocking.await(delivery, delivery::claim)) {
                return Uni.createFrom().nullItem();
            }
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        Uni<Object> handled;
        try {
            handled = Attempts.toUni(ic.proceed());
        } catch (Throwable t) {
            return failing(delivery.failed(t));
        }
        return handled.onItemOrFailure().transformToUni((item, failure) -> {
            if (failure != null) {
                return failing(delivery.failed(failure));
            }
            if (plan.processor()) {
                delivery.awaitOutputAck();
                return Uni.createFrom().item(item);
            }
            return delivery.succeeded().replaceWith(item);
        }).onCancellation().invoke(delivery::abandoned);
    }

    private Object aroundMessage(InvocationContext ic, MethodPlan plan) throws Exception {
        Message<?> message = (Message<?>) ic.getParameters()[0];
        InboundMessage inbound = InboundMessages.current();
        String channel = plan.singleChannel() != null ? plan.singleChannel()
                : inbound == null ? null : inbound.channel();
        CompletionStage<Void> outcome = handleMessage(ic, plan, message, channel, inbound);
        return plan.returns() == IdempotentMethodInfo.Returns.UNI ? Uni.createFrom().completionStage(outcome) : outcome;
    }

    private CompletionStage<Void> handleMessage(InvocationContext ic, MethodPlan plan, Message<?> message,
            String channel, InboundMessage inbound) {
        Delivery delivery;
        try {
            delivery = deliveries.start(plan, channel, message.getPayload(),
                    inbound != null ? inbound.message() : message);
            if (inbound != null) {
                inbound.started(delivery);
            }
            if (delivery.isDuplicate() || !Blocking.await(delivery, delivery::claim)) {
                return message.ack();
            }
        } catch (IdempotencyException e) {
            return message.nack(e);
        }
        Object[] parameters = ic.getParameters().clone();
        parameters[0] = SettlementObserver.observe(message, () -> delivery);
        ic.setParameters(parameters);
        Uni<Object> handled;
        try {
            handled = Attempts.toUni(ic.proceed());
        } catch (Throwable t) {
            return delivery.failed(t).subscribeAsCompletionStage().thenCompose(message::nack);
        }
        // A stage that fails without nacking is nacked by the mediator on the original message, which this delivery
        // does not see: the stage fails with the delivery's outcome instead (settling twice answers the first outcome).
        return handled.onFailure().recoverWithUni(failure -> failing(delivery.failed(failure))).onCancellation()
                .invoke(delivery::abandoned)
                .replaceWithVoid().subscribeAsCompletionStage();
    }

    /** @return a failure with the delivery's outcome, once its failed attempt is settled */
    private static <T> Uni<T> failing(Uni<IdempotencyException> outcome) {
        return outcome.onItem().transformToUni(e -> Uni.createFrom().failure(e));
    }
}
