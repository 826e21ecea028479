package io.quarkiverse.idempotency.runtime.jta;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.runtime.Delivery;
import io.quarkiverse.idempotency.runtime.IdempotencyGuard;

/**
 * Inside the handler's transaction: confirms the key in that same transaction (database stores), so that "the work
 * committed" and "the key is a fact" are one event, and learns whether the transaction committed, so that a rollback
 * without an exception (setRollbackOnly) forgets the claim. Registered only when the application has JTA.
 */
@Idempotent
@Interceptor
@Priority(IdempotencyTransactionInterceptor.PRIORITY)
public class IdempotencyTransactionInterceptor {

    /** Just inside {@code @Transactional} (PLATFORM_BEFORE + 200), so the transaction is active here. */
    public static final int PRIORITY = Interceptor.Priority.PLATFORM_BEFORE + 210;

    private final TransactionSynchronizationRegistry registry;
    private final IdempotencyGuard guard;

    @Inject
    public IdempotencyTransactionInterceptor(TransactionSynchronizationRegistry registry, IdempotencyGuard guard) {
        this.registry = registry;
        this.guard = guard;
    }

    @AroundInvoke
    Object around(InvocationContext ic) throws Exception {
        Object data = ic.getContextData().get(Delivery.CONTEXT_KEY);
        if (!(data instanceof Delivery delivery)) {
            return ic.proceed();
        }
        if (registry.getTransactionStatus() != Status.STATUS_ACTIVE) {
            if (delivery.claimsInTransaction() && delivery.claim() == null) {
                throw new IllegalStateException(delivery.plan().description() + " has @Idempotent(claimInTransaction"
                        + " = true) but runs without a transaction; use @Transactional (REQUIRED, REQUIRES_NEW or"
                        + " MANDATORY), or remove claimInTransaction");
            }
            return ic.proceed();
        }
        registry.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
            }

            @Override
            public void afterCompletion(int status) {
                delivery.transactionCompleted(status == Status.STATUS_COMMITTED);
            }
        });
        if (delivery.claimsInTransaction() && delivery.claim() == null && !guard.claimInTransaction(delivery)) {
            return null; // a duplicate: the handler does not run, and a processor emits nothing
        }
        Object result;
        try {
            result = ic.proceed();
        } catch (Exception e) {
            // A checked exception (or one in dontRollbackOn) would commit the work while the claim is forgotten and
            // the message retried: whatever the handler throws, its transaction must not commit.
            if (registry.getTransactionStatus() == Status.STATUS_ACTIVE) {
                registry.setRollbackOnly();
            }
            throw e;
        }
        if (delivery.claimsInTransaction()) {
            return result; // the key was inserted as confirmed, in this transaction
        }
        if (guard.storeJoinsTransactions() && registry.getTransactionStatus() == Status.STATUS_ACTIVE
                && !guard.confirmInTransaction(delivery)) {
            registry.setRollbackOnly();
        }
        return result;
    }
}
