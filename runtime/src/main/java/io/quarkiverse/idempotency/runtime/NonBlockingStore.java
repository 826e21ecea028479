package io.quarkiverse.idempotency.runtime;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkus.arc.All;

/**
 * The store's calls made without blocking, for methods that run on the event loop: the memory store's, answered at
 * once, or the database store's through the reactive PostgreSQL client. Resolved on first use, so that an application
 * without such methods never needs the client's pool.
 */
@Singleton
public class NonBlockingStore {

    private final IdempotencyStore store;
    private final List<KeyCalls.Provider> providers;
    private volatile KeyCalls keys;
    private volatile String unavailable;

    @Inject
    public NonBlockingStore(IdempotencyStore store, @All List<KeyCalls.Provider> providers) {
        this.store = store;
        this.providers = List.copyOf(providers);
    }

    /** @return the store's calls without blocking, or {@code null} when it has none */
    KeyCalls keysIfAny() {
        return unavailable() == null ? keys : null;
    }

    /**
     * @return the store's calls without blocking
     * @throws IllegalStateException when it has none ({@link #unavailable()} says why)
     */
    public KeyCalls keys() {
        String why = unavailable();
        if (why != null) {
            throw new IllegalStateException("The idempotency store's calls cannot be made without blocking: " + why);
        }
        return keys;
    }

    /** @return why the store's calls cannot be made without blocking, or {@code null} when they can */
    public String unavailable() {
        if (keys == null && unavailable == null) {
            resolve();
        }
        return keys != null ? null : unavailable;
    }

    private synchronized void resolve() {
        if (keys != null || unavailable != null) {
            return;
        }
        if (store.neverBlocks()) {
            keys = KeyCalls.onCallingThread(store);
        } else if (providers.isEmpty()) {
            unavailable = "the idempotency store " + store.getClass().getName() + " can make them only through the"
                    + " reactive PostgreSQL client (the database store), which the application does not have: add"
                    + " io.quarkus:quarkus-reactive-pg-client";
        } else {
            try {
                keys = providers.get(0).keysOf(store);
            } catch (IllegalStateException e) {
                unavailable = e.getMessage();
            }
        }
    }
}
