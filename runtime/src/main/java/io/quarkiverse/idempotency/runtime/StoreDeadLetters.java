package io.quarkiverse.idempotency.runtime;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Releases dead-lettered keys in the store, for replays.
 */
@Singleton
public class StoreDeadLetters implements DeadLetters {

    private static final Logger LOG = Logger.getLogger(StoreDeadLetters.class);

    private final IdempotencyStore store;

    @Inject
    public StoreDeadLetters(IdempotencyStore store) {
        this.store = store;
    }

    @Override
    public boolean release(String scope, String key) {
        ScopedKey scoped = new ScopedKey(scope, key);
        boolean released = store.releaseDeadLetter(scoped);
        if (released) {
            LOG.infof("Released dead-lettered key '%s': its next delivery runs, with a fresh attempt budget", scoped);
        }
        return released;
    }
}
