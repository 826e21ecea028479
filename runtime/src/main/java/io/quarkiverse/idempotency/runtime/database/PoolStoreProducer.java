package io.quarkiverse.idempotency.runtime.database;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkus.arc.DefaultBean;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.reactive.datasource.runtime.ReactiveDataSourceUtil;

/**
 * Produces the database store of an application with only the reactive PostgreSQL client (no JDBC datasource), unless
 * the application supplies its own store bean: {@link PoolIdempotencyStore} on the pool of
 * {@code quarkus.idempotency.database.datasource}, by default the default one.
 */
@Singleton
public class PoolStoreProducer {

    @Produces
    @Singleton
    @DefaultBean
    PoolIdempotencyStore poolStore(IdempotencyBuildTimeConfig config, IdempotencyConfig runtimeConfig) {
        String name = config.database().datasource().orElse(DataSourceUtil.DEFAULT_DATASOURCE_NAME);
        io.vertx.sqlclient.Pool pool = ReactiveDataSourceUtil.dataSourceIfActive(name)
                .orElseThrow(() -> new IllegalStateException("The idempotency database store uses datasource '" + name
                        + "' (quarkus.idempotency.database.datasource) through the reactive PostgreSQL client, but it"
                        + " has no reactive URL or is not active: set quarkus.datasource"
                        + (DataSourceUtil.isDefault(name) ? "" : ".\"" + name + "\"") + ".reactive.url"));
        int batchSize = runtimeConfig.database().leaseBatchSize();
        if (batchSize < 1) {
            throw new IllegalArgumentException("quarkus.idempotency.database.lease-batch-size must be at least 1, not "
                    + batchSize);
        }
        return new PoolIdempotencyStore(io.vertx.mutiny.sqlclient.Pool.newInstance(pool), config.database().table(),
                batchSize, runtimeConfig.database().asynchronousClaimCommit(), PartitionPlan.of(runtimeConfig));
    }
}
