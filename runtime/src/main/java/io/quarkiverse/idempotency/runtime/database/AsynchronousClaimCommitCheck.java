package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

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

    private static final Logger LOG = Logger.getLogger(AsynchronousClaimCommitCheck.class);

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
            LOG.warnf("quarkus.idempotency.database.asynchronous-claim-commit is on, but %s run without a"
                    + " transaction: if the database server crashes while one runs, its claim may be lost, its"
                    + " confirm then finds no claim, and the key is not remembered (a later duplicate runs again)."
                    + " Make them @Transactional, or turn asynchronous-claim-commit off", withoutTransaction);
        }
    }
}
