package io.quarkiverse.idempotency.runtime.database;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;
import io.quarkus.arc.DefaultBean;
import io.quarkus.datasource.common.runtime.DataSourceUtil;

/**
 * Produces the database store when it is the selected store, unless the application supplies its own store bean. It
 * uses the datasource named by {@code quarkus.idempotency.database.datasource}, by default the default one.
 */
@Singleton
public class DatabaseStoreProducer {

    @Produces
    @Singleton
    @DefaultBean
    DatabaseIdempotencyStore databaseStore(TransactionManager transactions, IdempotencyBuildTimeConfig config,
            IdempotencyConfig runtimeConfig) {
        String name = config.database().datasource().orElse(DataSourceUtil.DEFAULT_DATASOURCE_NAME);
        AgroalDataSource dataSource = AgroalDataSourceUtil.dataSourceIfActive(name)
                .orElseThrow(() -> new IllegalStateException("The idempotency database store uses datasource '" + name
                        + "' (quarkus.idempotency.database.datasource), which is not configured or not active"));
        // Handlers' transactions are on the default datasource (or on the only one): keys elsewhere cannot join them.
        boolean joinsTransactions = DataSourceUtil.isDefault(name)
                || AgroalDataSourceUtil.activeDataSourceNames().equals(java.util.Set.of(name));
        PartitionPlan plan = PartitionPlan.of(runtimeConfig);
        int batchSize = runtimeConfig.database().leaseBatchSize();
        if (batchSize < 1) {
            throw new IllegalArgumentException("quarkus.idempotency.database.lease-batch-size must be at least 1, not "
                    + batchSize);
        }
        return new DatabaseIdempotencyStore(dataSource, transactions, config.database().table(),
                runtimeConfig.database().asynchronousClaimCommit(), joinsTransactions, plan, batchSize);
    }
}
