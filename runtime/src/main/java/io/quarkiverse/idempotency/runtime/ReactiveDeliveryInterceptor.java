package io.quarkiverse.idempotency.runtime;

import java.util.function.Consumer;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import org.hibernate.reactive.mutiny.Mutiny;

import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.runtime.database.SessionKeys;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkiverse.idempotency.runtime.outbox.SessionOutbox;
import io.quarkus.hibernate.reactive.panache.common.runtime.SessionOperations;
import io.smallrye.mutiny.Uni;

/**
 * Inside a {@code @WithTransaction} method's reactive transaction, on its event loop: writes the key there through the
 * method's own session ({@link io.quarkiverse.idempotency.IdempotencyMode#IN_TRANSACTION}), or confirms there the
 * lease-mode claim the outer interceptor took first, so that the work and the key are one commit; a rollback leaves
 * neither. Nothing here blocks. Registered only when the application has Hibernate Reactive Panache.
 */
@Idempotent
@Interceptor
@Priority(DeliveryHandOff.INSIDE_TRANSACTION) // its transaction is open here
public class ReactiveDeliveryInterceptor {

    private final SessionKeys keys;
    /**
     * What the handler sends through outboxes, and a {@code @ThroughOutbox} processor's output, written in its
     * transaction; {@code null} without an outbox.
     */
    private final SessionOutbox sessionOutbox;

    @Inject
    public ReactiveDeliveryInterceptor(IdempotencyStore store, Instance<Outbox> outboxes) {
        this.keys = store instanceof SqlKeyStore database ? new SessionKeys(database) : null;
        this.sessionOutbox = outboxes.isResolvable() ? new SessionOutbox(outboxes.get()) : null;
    }

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        if (!(ic.getContextData().get(DeliveryHandOff.REACTIVE) instanceof Delivery delivery)) {
            return ic.proceed();
        }
        MethodPlan plan = delivery.target().plan();
        // @WithTransaction opened it: the current one, without an operator more per message
        Mutiny.QueryProducer session = plan.statelessSession()
                ? SessionOperations.getCurrentStatelessSession(plan.persistenceUnit())
                : SessionOperations.getCurrentSession(plan.persistenceUnit());
        if (session == null) {
            Uni<? extends Mutiny.QueryProducer> opened = plan.statelessSession()
                    ? SessionOperations.getStatelessSession(plan.persistenceUnit())
                    : SessionOperations.getSession(plan.persistenceUnit());
            return opened.chain(s -> inTransaction(ic, delivery, s));
        }
        return inTransaction(ic, delivery, session);
    }

    private Uni<Object> inTransaction(InvocationContext ic, Delivery delivery, Mutiny.QueryProducer session) {
        TransactionKeys transaction = keys.in(session);
        String outboxChannel = delivery.target().plan().outboxChannel();
        String outputId = outboxChannel == null ? null : Outbox.outputId(delivery.outputKey(), outboxChannel);
        Uni<Object> ran;
        if (delivery.state() != DeliveryState.KEYED) {
            // claimed on a lease before this transaction (a redelivery, or a dead owner's claim taken over): the
            // handler runs, and the claim is confirmed in its transaction; a failure rolls the transaction back, and
            // the outer interceptor counts it
            ran = attempt(ic, session, outboxChannel, outputId).call(() -> delivery.confirmInTransaction(transaction)
                    .invoke(confirmed -> {
                        if (!confirmed) {
                            throw new ClaimLostException(delivery.key()); // taken over: this run's work must not commit
                        }
                    }));
        } else {
            // the handler runs for a new key; a duplicate, or a dead owner's claim to take over first, ends the
            // transaction
            ran = delivery.claimInTransaction(transaction,
                    run -> run ? attempt(ic, session, outboxChannel, outputId) : Uni.createFrom().nullItem());
        }
        // A handler that marked its transaction for rollback returned normally, and @WithTransaction rolls it back:
        // a failed attempt, never an ack (nor a message sent through an outbox)
        Mutiny.Transaction reactive = session instanceof Mutiny.Session s ? s.currentTransaction()
                : session instanceof Mutiny.StatelessSession s ? s.currentTransaction() : null;
        return reactive == null ? ran : ran.invoke(() -> {
            if (reactive.isMarkedForRollback()) {
                delivery.transactionEnded(false);
            }
        });
    }

    // The handler; what it sends through outboxes is written in its transaction once it returned, and sent by the outer
    // interceptor once that transaction committed.
    // A @ThroughOutbox processor's output is such a message: SmallRye forwards nothing and acks the input.
    private Uni<Object> attempt(InvocationContext ic, Mutiny.QueryProducer session, String outboxChannel,
            String outputId) {
        if (sessionOutbox == null) {
            if (outboxChannel != null) {
                throw new IllegalStateException("@ThroughOutbox " + ic.getMethod() + " without an outbox");
            }
            return Attempts.attempt(ic);
        }
        Consumer<Runnable> afterCommit = send -> ic.getContextData().put(DeliveryHandOff.AFTER_COMMIT, send);
        return outboxChannel == null
                ? sessionOutbox.around(() -> Attempts.attempt(ic), SessionKeys.calls(session), afterCommit)
                : sessionOutbox.aroundOutput(() -> Attempts.attempt(ic), outboxChannel, outputId,
                        SessionKeys.calls(session), afterCommit);
    }
}
