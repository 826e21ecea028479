package io.quarkiverse.idempotency.runtime;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Releases dead-lettered keys in the store, for replays.
 */
@Singleton
public class StoreDeadLetters implements DeadLetters {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(StoreDeadLetters.class);

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
            LOG.released(scoped);
        }
        return released;
    }
}
