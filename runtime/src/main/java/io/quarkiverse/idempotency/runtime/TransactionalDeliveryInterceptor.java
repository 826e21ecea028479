package io.quarkiverse.idempotency.runtime;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionSynchronizationRegistry;

import io.quarkiverse.idempotency.Idempotent;

/**
 * Inside an {@code @Idempotent} method's transaction: writes the key there
 * ({@link io.quarkiverse.idempotency.IdempotencyMode#IN_TRANSACTION}), or confirms the lease-mode claim there; and
 * tells the delivery when the transaction will roll back without an exception (rollback-only). Registered only when
 * the application has JTA.
 */
@Idempotent
@Interceptor
@Priority(TransactionalDeliveryInterceptor.PRIORITY)
public class TransactionalDeliveryInterceptor {

    /** Just inside {@code @Transactional} (PLATFORM_BEFORE + 200), so the transaction is active here. */
    public static final int PRIORITY = Interceptor.Priority.PLATFORM_BEFORE + 210;

    private final TransactionSynchronizationRegistry registry;

    @Inject
    public TransactionalDeliveryInterceptor(TransactionSynchronizationRegistry registry) {
        this.registry = registry;
    }

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        if (!(ic.getContextData().get(Delivery.CONTEXT_KEY) instanceof Delivery delivery)) {
            return ic.proceed();
        }
        boolean inTransaction = delivery.plan().inTransaction();
        if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
            if (inTransaction) {
                throw new IllegalStateException(delivery.plan().description() + " writes its key in its transaction"
                        + " (in-transaction mode), but runs without one; use @Transactional (REQUIRED or"
                        + " REQUIRES_NEW), or @Idempotent(mode = IdempotencyMode.LEASE)");
            }
            return ic.proceed();
        }
        if (inTransaction && !delivery.claimInTransaction()) {
            return null; // a duplicate: the handler does not run
        }
        Object result;
        try {
            result = ic.proceed();
        } catch (Exception e) {
            // A checked exception (or one in dontRollbackOn) would commit the work while the attempt counts as failed
            // and the message is retried: whatever the handler throws, its transaction must not commit.
            if (registry.getTransactionStatus() == Status.STATUS_ACTIVE) {
                registry.setRollbackOnly();
            }
            throw e;
        }
        if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
            delivery.markedRollbackOnly();
        } else if (delivery.plan().confirmsInTransaction() && !delivery.confirmInTransaction()) {
            registry.setRollbackOnly(); // the claim was taken over: this run's work must not commit
        }
        return result;
    }
}
