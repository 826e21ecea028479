package io.quarkiverse.idempotency.runtime;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkus.runtime.StartupEvent;

/**
 * At the start of an instance that has a name ({@code quarkus.idempotency.instance-id}), before its consumers start:
 * the lease-mode claims its earlier starts left are theirs no more. A name is used by one running instance at a time,
 * so those starts are dead, and their claims would otherwise hold their keys until their leases run out: a crash loop
 * would recover only after a lease. Their leases end now; each claim is then taken over by the next delivery of its
 * message, counted as its dead holder's attempt, as any takeover is.
 */
@Singleton
public class EarlierIncarnations {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(EarlierIncarnations.class);

    /** Just after the store's table is created or checked (PLATFORM_BEFORE), before the consumers start. */
    void takeBack(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE + 1) StartupEvent event, WorkerId worker,
            IdempotencyStore store) {
        if (worker.instance() == null) {
            return;
        }
        try {
            int ended = store.endLeasesOfEarlierStarts(worker.instance() + WorkerId.INCARNATION, worker.value() + "#");
            if (ended > 0) {
                LOG.earlierStartsEnded(worker.instance(), ended);
            }
        } catch (RuntimeException e) {
            LOG.earlierStartsNotEnded(worker.instance(), e.toString());
        }
    }
}
