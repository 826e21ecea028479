package io.quarkiverse.idempotency.runtime;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import org.hibernate.reactive.mutiny.Mutiny;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.HandlerTransactionAbortedException;
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

    /** PostgreSQL: the transaction is aborted; commands are ignored until its end. */
    private static final String IN_FAILED_TRANSACTION = "25P02";

    private final SessionKeys keys;

    @Inject
    public ReactiveDeliveryInterceptor(IdempotencyStore store) {
        this.keys = store instanceof SqlKeyStore database ? new SessionKeys(database) : null;
    }

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        if (!(ic.getContextData().get(Delivery.REACTIVE_CONTEXT_KEY) instanceof Delivery delivery)) {
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
        if (delivery.state() != DeliveryState.KEYED) {
            // claimed on a lease before this transaction (a redelivery, or a dead owner's claim taken over): the
            // handler runs, and the claim is confirmed in its transaction
            return handle(ic, delivery, session, true);
        }
        long start = System.nanoTime();
        // the common case, a new key, is one insert, and one operator here
        return keys.insert(session, delivery.key(), delivery.token(), delivery.retention(), delivery.facts()).onItemOrFailure()
                .transformToUni((inserted, failure) -> {
                    if (failure != null) {
                        return Uni.createFrom().failure(delivery.sessionFailed("claim", failure));
                    }
                    if (inserted == 1) {
                        return claimed(ic, delivery, session, SessionKeys.NEW, start);
                    }
                    return keys.afterInsert(session, delivery.key(), delivery.token(), delivery.retention(),
                            delivery.facts())
                            .onItemOrFailure().transformToUni((claim, again) -> again != null
                                    ? Uni.createFrom().failure(delivery.sessionFailed("claim", again))
                                    : claimed(ic, delivery, session, claim, start));
                });
    }

    // The handler runs for a new key; a duplicate, or a dead owner's claim to take over first, ends the transaction.
    private Uni<Object> claimed(InvocationContext ic, Delivery delivery, Mutiny.QueryProducer session, Claim claim,
            long start) {
        return delivery.answeredInTransaction(claim, start) ? handle(ic, delivery, session, false)
                : Uni.createFrom().nullItem();
    }

    private Uni<Object> handle(InvocationContext ic, Delivery delivery, Mutiny.QueryProducer session,
            boolean confirm) {
        // a failure rolls the transaction back; the outer interceptor counts it
        Uni<Object> handled = IdempotencyInterceptor.attempt(ic);
        if (!confirm) {
            return handled;
        }
        return handled.call(() -> keys.confirm(session, delivery.key(), delivery.token(), delivery.retention())
                .onFailure().transform(e -> aborted(e)
                        ? new HandlerTransactionAbortedException("The transaction of the handler of key '"
                                + delivery.key() + "' was aborted by a statement of its own that failed and was"
                                + " caught: its work and its key cannot commit", e)
                        : delivery.sessionFailed("confirm", e))
                .invoke(confirmed -> {
                    if (!delivery.confirmedInTransaction(confirmed)) {
                        throw new ClaimLostException(delivery.key()); // taken over: this run's work must not commit
                    }
                }));
    }

    private static boolean aborted(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains(IN_FAILED_TRANSACTION)) {
                return true;
            }
        }
        return false;
    }
}
