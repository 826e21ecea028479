package io.quarkiverse.idempotency.runtime;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.StoreUnavailableException;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.smallrye.mutiny.Uni;

/**
 * Inside an {@code @Idempotent} method's transaction: writes the key there
 * ({@link io.quarkiverse.idempotency.IdempotencyMode#IN_TRANSACTION}), or confirms the lease-mode claim there; and
 * before the commit, makes sure the database did not abort the transaction under the method (which would roll back
 * silently at the commit); and tells the delivery how the transaction really ended, so that a transaction rolled back after the
 * method returned (an
 * application interceptor, a timeout, rollback-only) is a failed attempt, never an ack. Registered only when the
 * application has JTA.
 */
@Idempotent
@Interceptor
@Priority(DeliveryHandOff.INSIDE_TRANSACTION) // the transaction is active here
public class TransactionalDeliveryInterceptor {

    private final TransactionSynchronizationRegistry registry;
    private final IdempotencyStore store;
    private final TransactionKeys keys;

    /** Where a {@code @ThroughOutbox} processor's output is written; {@code null} without an outbox. */
    private final Outbox outbox;

    @Inject
    public TransactionalDeliveryInterceptor(TransactionSynchronizationRegistry registry, IdempotencyStore store,
            Instance<Outbox> outboxes) {
        this.registry = registry;
        this.store = store;
        this.keys = TransactionKeys.jta(store);
        this.outbox = outboxes.isResolvable() ? outboxes.get() : null;
    }

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        if (!(ic.getContextData().get(DeliveryHandOff.JTA) instanceof Delivery delivery)) {
            return ic.proceed();
        }
        MethodPlan plan = delivery.target().plan();
        if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
            if (plan.inTransaction() || plan.outboxChannel() != null) {
                throw new IllegalStateException(plan.description() + " writes its key (or its output, @ThroughOutbox)"
                        + " in its transaction, but runs without one; use @Transactional (REQUIRED or"
                        + " REQUIRES_NEW), or @Idempotent(mode = IdempotencyMode.LEASE)");
            }
            return ic.proceed();
        }
        registry.registerInterposedSynchronization(new Ending(delivery));
        if (delivery.state() == DeliveryState.KEYED
                && !Blocking.await(delivery, () -> delivery.claimInTransaction(keys, Uni.createFrom()::item))) {
            return null; // a duplicate, or a dead owner's claim to take over on a lease first: the handler does not run
        }
        Object result;
        try {
            result = ic.proceed();
            if (plan.outboxChannel() != null) {
                // written in this transaction, sent once it committed; SmallRye forwards nothing and acks the input
                outbox.writeOutput(plan.outboxChannel(), result,
                        Outbox.outputId(delivery.outputKey(), plan.outboxChannel()));
                result = null;
            }
        } catch (Exception e) {
            // A checked exception (or one in dontRollbackOn) would commit the work while the attempt counts as failed
            // and the message is retried: whatever the handler throws, its transaction must not commit.
            if (registry.getTransactionStatus() == Status.STATUS_ACTIVE) {
                registry.setRollbackOnly();
            }
            throw keysApartIf(delivery, e);
        }
        try {
            if (registry.getTransactionStatus() == Status.STATUS_ACTIVE && delivery.state() == DeliveryState.CLAIMED
                    && plan.confirmsInTransaction() && !Blocking.await(delivery, () -> delivery.confirmInTransaction(keys))) {
                registry.setRollbackOnly(); // the claim was taken over: this run's work must not commit
            }
        } catch (StoreUnavailableException e) {
            throw keysApartIf(delivery, e);
        }
        if (delivery.state() == DeliveryState.WRITTEN_IN_TRANSACTION) {
            try {
                store.checkTransaction(delivery.key());
            } catch (RuntimeException e) {
                registry.setRollbackOnly();
                throw e;
            }
        }
        return result;
    }

    // The transaction refused one of two datasources, the keys' and the method's work's: not the message's fault, a
    // setting's. The method's keys are kept apart from now on, and this delivery comes back soon, uncounted.
    private static Exception keysApartIf(Delivery delivery, Exception failure) {
        if (!EnlistRefusal.in(failure)) {
            return failure;
        }
        delivery.target().plan().workOnAnotherDataSource(failure);
        return failure instanceof StoreUnavailableException ? failure
                : new StoreUnavailableException("write in the method's transaction", delivery.key(), failure);
    }

    /** Tells the delivery how its transaction ended; never throws (the cleanup of the transaction's resources follows). */
    private record Ending(Delivery delivery) implements Synchronization {

        @Override
        public void beforeCompletion() {
        }

        @Override
        public void afterCompletion(int status) {
            delivery.transactionEnded(status == Status.STATUS_COMMITTED);
        }
    }
}
