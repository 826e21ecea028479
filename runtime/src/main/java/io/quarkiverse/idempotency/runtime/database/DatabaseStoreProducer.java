package io.quarkiverse.idempotency.runtime.database;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.WorkerId;
import io.quarkus.arc.DefaultBean;

/**
 * Produces the database store when it is the selected store, unless the application supplies its own store bean.
 */
@Singleton
public class DatabaseStoreProducer {

    @Produces
    @Singleton
    @DefaultBean
    DatabaseIdempotencyStore databaseStore(IdempotencyBuildTimeConfig config, WorkerId worker) {
        return new DatabaseIdempotencyStore(config.database().table(), worker.value());
    }
}
