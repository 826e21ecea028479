package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.IdempotencyStore.HeldClaim;
import io.quarkiverse.idempotency.ScopedKey;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;

/**
 * Renews the leases of running handlers' claims, so that a slow but live handler is not taken over while a dead one's
 * claim runs out within its lease: a Vert.x timer every third of the shortest lease, renewing (in one store call) the
 * claims not renewed for a third of their own lease. The call runs on a worker thread of its own, so that handlers
 * holding every thread of the worker pool cannot starve it; the store skips a claim whose record another transaction
 * holds, so that one row cannot stall the others. Per message it costs one set insertion and one removal.
 */
final class LeaseRenewer implements AutoCloseable {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(LeaseRenewer.class);

    private final Set<Lease> running = ConcurrentHashMap.newKeySet();
    private final IdempotencyStore store;
    private final Vertx vertx;
    private final WorkerExecutor worker;
    private final long timer;
    private final AtomicBoolean renewing = new AtomicBoolean();

    LeaseRenewer(IdempotencyStore store, Vertx vertx, Duration shortestLease) {
        this.store = store;
        this.vertx = vertx;
        this.worker = vertx.createSharedWorkerExecutor("idempotency-lease-renewal", 1);
        long periodMillis = Math.max(100, shortestLease.toMillis() / 3);
        this.timer = vertx.setPeriodic(periodMillis, id -> {
            // one renewal at a time: a slow store must not pile up renewals on the worker pool
            if (!running.isEmpty() && renewing.compareAndSet(false, true)) {
                worker.executeBlocking(() -> {
                    try {
                        renewDue();
                    } finally {
                        renewing.set(false);
                    }
                    return null;
                }, false);
            }
        });
    }

    void track(Lease lease) {
        running.add(lease);
    }

    void untrack(Lease lease) {
        running.remove(lease);
    }

    /** @return whether a claim on this key is being renewed */
    boolean tracking(ScopedKey key) {
        for (Lease lease : running) {
            if (lease.key().equals(key)) {
                return true;
            }
        }
        return false;
    }

    private void renewDue() {
        long now = System.nanoTime();
        List<Lease> due = new ArrayList<>();
        for (Lease d : running) {
            if (d.outlived(now)) {
                // a delivery that never ended (a lost stage): let its claim run out rather than renew it for ever
                running.remove(d);
                LOG.renewalStopped(d.key());
            } else if (d.renewalDue(now)) {
                due.add(d);
                d.reportIfLapsed();
            }
        }
        if (due.isEmpty()) {
            return;
        }
        List<HeldClaim> claims = new ArrayList<>(due.size());
        for (Lease d : due) {
            claims.add(d.held());
        }
        try {
            store.renew(claims);
            for (Lease d : due) {
                d.renewedAt(now);
            }
        } catch (RuntimeException e) {
            LOG.renewalFailed(claims.size(), e.toString());
        }
    }

    @Override
    public void close() {
        vertx.cancelTimer(timer);
        worker.close();
    }
}
