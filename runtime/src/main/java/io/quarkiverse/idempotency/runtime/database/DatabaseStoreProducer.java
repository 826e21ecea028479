package io.quarkiverse.idempotency.runtime.database;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkus.arc.DefaultBean;

/**
 * Produces the database store when it is the selected store, unless the application supplies its own store bean. It
 * uses the default datasource, the one of the default persistence unit.
 */
@Singleton
public class DatabaseStoreProducer {

    @Produces
    @Singleton
    @DefaultBean
    DatabaseIdempotencyStore databaseStore(AgroalDataSource dataSource, TransactionManager transactions,
            IdempotencyBuildTimeConfig config, IdempotencyConfig runtimeConfig) {
        return new DatabaseIdempotencyStore(dataSource, transactions, config.database().table(),
                runtimeConfig.database().asynchronousClaimCommit());
    }
}
