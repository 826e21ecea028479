package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.MethodPlan;
import io.quarkus.runtime.StartupEvent;

/**
 * Warns at startup when {@code quarkus.idempotency.database.asynchronous-claim-commit} is on and a lease-mode
 * {@code @Idempotent} method runs without a transaction: a claim lost in a database crash cannot be made up for there.
 * A transactional handler's confirm that finds no claim rolls its work back and the message is retried; a handler
 * without a transaction has already done its work, so the message is acked but its key is never confirmed, and a later
 * duplicate runs again.
 */
@Singleton
public class AsynchronousClaimCommitCheck {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(AsynchronousClaimCommitCheck.class);

    void check(@Observes StartupEvent event, DatabaseIdempotencyStore store, IdempotentMethods methods) {
        if (!store.asynchronousClaimCommit()) {
            return;
        }
        List<String> withoutTransaction = new ArrayList<>();
        for (MethodPlan plan : methods.plans()) {
            if (!plan.inTransaction() && !plan.transactional()) {
                withoutTransaction.add(plan.description());
            }
        }
        if (!withoutTransaction.isEmpty()) {
            LOG.asynchronousClaimCommitWithoutTransaction(withoutTransaction);
        }
    }
}
