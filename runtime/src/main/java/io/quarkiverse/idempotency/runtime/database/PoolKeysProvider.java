package io.quarkiverse.idempotency.runtime.database;

import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.KeyCalls;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.reactive.datasource.runtime.ReactiveDataSourceUtil;

/**
 * The database store's {@link KeyCalls}: its statements over the reactive client's pool of the keys' datasource.
 * Registered only when the application has the reactive PostgreSQL client, so that this class (and the client's) is
 * never loaded without it.
 */
@Singleton
public class PoolKeysProvider implements KeyCalls.Provider {

    private final String datasource;

    public PoolKeysProvider(IdempotencyBuildTimeConfig config) {
        this.datasource = config.database().datasource().orElse(DataSourceUtil.DEFAULT_DATASOURCE_NAME);
    }

    @Override
    public KeyCalls keysOf(IdempotencyStore store) {
        if (store instanceof PoolIdempotencyStore reactiveOnly) {
            return reactiveOnly.keys(); // the store talks to the reactive client itself
        }
        if (!(store instanceof DatabaseIdempotencyStore database)) {
            throw new IllegalStateException("the idempotency store " + store.getClass().getName() + " is not the"
                    + " database store, the one whose calls go through the reactive PostgreSQL client");
        }
        return ReactiveDataSourceUtil.dataSourceIfActive(datasource)
                .map(pool -> new PoolKeys(database, io.vertx.mutiny.sqlclient.Pool.newInstance(pool)))
                .orElseThrow(() -> new IllegalStateException("the reactive PostgreSQL client has no active pool on the"
                        + " keys' datasource '" + datasource + "' (set quarkus.datasource"
                        + (DataSourceUtil.isDefault(datasource) ? "" : ".\"" + datasource + "\"") + ".reactive.url to"
                        + " the database quarkus.datasource" + (DataSourceUtil.isDefault(datasource) ? ""
                                : ".\"" + datasource + "\"")
                        + ".jdbc.url names)"));
    }
}
