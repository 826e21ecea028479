package io.quarkiverse.idempotency.runtime;

import jakarta.annotation.Priority;
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
@Priority(ReactiveDeliveryInterceptor.PRIORITY)
public class ReactiveDeliveryInterceptor {

    /** Just inside {@code @WithTransaction} (PLATFORM_BEFORE + 200), so that its transaction is open here. */
    public static final int PRIORITY = Interceptor.Priority.PLATFORM_BEFORE + 210;
    /**
     * Where the outer interceptor leaves the delivery of a {@code @WithTransaction} method for this one. A constant, so
     * that the outer one never loads this class, which needs Hibernate Reactive (a native image would initialize it).
     */
    static final String DELIVERY = "io.quarkiverse.idempotency.runtime.Delivery.reactive";

    private final SessionKeys keys;

    @Inject
    public ReactiveDeliveryInterceptor(IdempotencyStore store) {
        this.keys = store instanceof SqlKeyStore database ? new SessionKeys(database) : null;
    }

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        if (!(ic.getContextData().get(DELIVERY) instanceof Delivery delivery)) {
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
        if (delivery.state() != DeliveryState.KEYED) {
            // claimed on a lease before this transaction (a redelivery, or a dead owner's claim taken over): the
            // handler runs, and the claim is confirmed in its transaction; a failure rolls the transaction back, and
            // the outer interceptor counts it
            return Attempts.attempt(ic).call(() -> delivery.confirmInTransaction(transaction)
                    .invoke(confirmed -> {
                        if (!confirmed) {
                            throw new ClaimLostException(delivery.key()); // taken over: this run's work must not commit
                        }
                    }));
        }
        // the handler runs for a new key; a duplicate, or a dead owner's claim to take over first, ends the transaction
        return delivery.claimInTransaction(transaction,
                run -> run ? Attempts.attempt(ic) : Uni.createFrom().nullItem());
    }
}
