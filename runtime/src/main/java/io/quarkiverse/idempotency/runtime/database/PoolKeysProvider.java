package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.KeyCalls;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.reactive.datasource.runtime.ReactiveDataSourceUtil;
import io.quarkus.runtime.StartupEvent;

/**
 * The database store's {@link KeyCalls}: its statements over the reactive client's pool of the keys' datasource.
 * Registered only when the application has the reactive PostgreSQL client, so that this class (and the client's) is
 * never loaded without it.
 */
@Singleton
public class PoolKeysProvider implements KeyCalls.Provider {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(PoolKeysProvider.class);
    private final String datasource;

    public PoolKeysProvider(IdempotencyBuildTimeConfig config) {
        this.datasource = config.database().datasource().orElse(DataSourceUtil.DEFAULT_DATASOURCE_NAME);
    }

    /**
     * With the database store over JDBC, the reactive client's connections of the keys' datasource commit the claims
     * and confirms of the methods on the event loop: they must commit durably by default, as the JDBC ones must
     * ({@link TableChecks#asynchronousByDefault}). A store over the reactive client only checks them itself.
     *
     * @throws StoreMisconfiguredException when they commit asynchronously by default
     */
    void checkCommits(@Observes StartupEvent event, IdempotencyStore store) {
        if (!(store instanceof DatabaseIdempotencyStore)) {
            return;
        }
        ReactiveDataSourceUtil.dataSourceIfActive(datasource).ifPresent(pool -> {
            String refusal;
            try {
                refusal = TableChecks.asynchronousByDefault(new PoolCalls(io.vertx.mutiny.sqlclient.Pool.newInstance(pool)))
                        .await().atMost(Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                LOG.storeUncheckedAtStartup(e.toString()); // not reachable yet: deliveries are retried until it is
                return;
            }
            if (refusal != null) {
                throw new StoreMisconfiguredException(refusal + " (over the reactive PostgreSQL client, which the"
                        + " methods on the event loop use)", null);
            }
        });
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
