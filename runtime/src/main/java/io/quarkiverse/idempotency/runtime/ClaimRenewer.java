package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Renews the claims of running handlers (a lease), so that a slow but live handler is not taken over: every third of
 * the shortest claim timeout, the claims held longer than a third of their own timeout are renewed in one store call.
 * Per message it costs one map insertion and one removal.
 */
final class ClaimRenewer implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ClaimRenewer.class);

    private final Set<Delivery> running = ConcurrentHashMap.newKeySet();
    private final IdempotencyStore store;
    private final ScheduledExecutorService timer;

    ClaimRenewer(IdempotencyStore store, Duration shortestClaimTimeout) {
        this.store = store;
        long periodMillis = Math.max(100, shortestClaimTimeout.toMillis() / 3);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "idempotency-claim-renewer");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::renewDue, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    void track(Delivery delivery) {
        running.add(delivery);
    }

    void untrack(Delivery delivery) {
        running.remove(delivery);
    }

    private void renewDue() {
        long now = System.nanoTime();
        List<Delivery> due = new ArrayList<>();
        for (Delivery d : running) {
            if (now - d.startedAt() >= d.plan().retention().toNanos()) {
                // a handler that never settled (a lost stage): let its claim expire rather than renew it for ever
                running.remove(d);
                LOG.warnf("Stopped renewing the claim on key '%s': %s has held it longer than its retention",
                        d.key(), d.plan().description());
            } else if (now - d.renewedAt() >= d.plan().claimTimeout().toNanos() / 3) {
                due.add(d);
            }
        }
        if (due.isEmpty()) {
            return;
        }
        List<ScopedKey> keys = new ArrayList<>(due.size());
        for (Delivery d : due) {
            keys.add(d.key());
        }
        try {
            store.renew(keys);
            for (Delivery d : due) {
                d.renewedAt(now);
            }
        } catch (RuntimeException e) {
            LOG.warnf(e, "Could not renew %d running claims; they will be taken over if their handlers outlast the"
                    + " claim timeout", keys.size());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
