package io.quarkiverse.idempotency.runtime;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkus.arc.DefaultBean;

/**
 * Produces the in-memory store when it is the selected store, unless the application supplies its own store bean.
 */
@Singleton
public class MemoryStoreProducer {

    @Produces
    @Singleton
    @DefaultBean
    InMemoryIdempotencyStore memoryStore() {
        return new InMemoryIdempotencyStore();
    }
}
