package io.quarkiverse.idempotency.runtime.outbox;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.WorkerId;
import io.quarkiverse.idempotency.runtime.database.KeyTable;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/**
 * The outbox, on the datasource of the keys: a message and the key of the delivery that sent it commit together.
 * Registered only when the application injects an {@code OutboxEmitter}.
 */
@Singleton
public class OutboxProducer {

    @Produces
    @Singleton
    Outbox outbox(TransactionManager transactions, TransactionSynchronizationRegistry registry, WorkerId worker,
            IdempotencyBuildTimeConfig config, IdempotencyConfig runtimeConfig,
            @Any Instance<OutgoingIds> connectors) {
        String name = config.database().datasource().orElse(DataSourceUtil.DEFAULT_DATASOURCE_NAME);
        AgroalDataSource dataSource = AgroalDataSourceUtil.dataSourceIfActive(name)
                .orElseThrow(() -> new IllegalStateException("The outbox uses datasource '" + name
                        + "' (quarkus.idempotency.database.datasource), which is not configured or not active"));
        return new Outbox(new OutboxTable(new KeyTable(dataSource, transactions, config.outbox().table())), registry,
                worker, OutboxSettings.of(runtimeConfig.outbox()), Infrastructure.getDefaultWorkerPool(),
                connectors.stream().toList());
    }
}
