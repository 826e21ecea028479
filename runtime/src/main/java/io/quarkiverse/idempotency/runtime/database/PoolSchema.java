package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.Database.Partitioning;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.SchemaManagement.Mode;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;

/**
 * {@link DatabaseSchema} for an application with only the reactive client ({@link PoolIdempotencyStore}): at startup,
 * creates the table or brings it up to date when {@code quarkus.idempotency.database.schema-management} says so (by
 * default in dev and test mode), through the client, in one transaction that instances starting at once take in turn.
 * A table partitioned by time, asked for or found, is refused: its partitions are managed over JDBC only.
 */
@Singleton
public class PoolSchema {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(PoolSchema.class);
    private static final Duration WITHIN = Duration.ofSeconds(60);

    // Before the store is checked (StoreCheck observes the same event at the default priority).
    void update(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent event, IdempotencyConfig config,
            IdempotencyStore active) {
        if (!(active instanceof PoolIdempotencyStore store)) {
            return;
        }
        if (config.database().partitioning().orElse(null) == Partitioning.TIME) {
            throw new StoreMisconfiguredException("quarkus.idempotency.database.partitioning=time, but the application"
                    + " has only the reactive PostgreSQL client, and the partitions of the idempotency table are managed"
                    + " over JDBC only: unset it, or add a JDBC datasource (quarkus-jdbc-postgresql) on the same"
                    + " database", null);
        }
        Mode mode = config.database().schemaManagement()
                .orElse(LaunchMode.current().isDevOrTest() ? Mode.UPDATE : Mode.VALIDATE);
        try {
            if (store.partitioned()) {
                throw new StoreMisconfiguredException("The idempotency table '" + store.tableName() + "' is partitioned by"
                        + " time, which an application with only the reactive PostgreSQL client does not support yet:"
                        + " add a JDBC datasource (quarkus-jdbc-postgresql) on the same database", null);
            }
            if (config.database().partitioning().isEmpty()) {
                LOG.unpartitionedByDefault(store.tableName(), "the application has only the reactive PostgreSQL client,"
                        + " and partitions are managed over JDBC");
            }
            // Up to date (every start but the first after an upgrade): no DDL, so no table lock that would queue the
            // running instances' claims behind this one.
            if (mode == Mode.UPDATE && !store.upToDate()) {
                String outdated = store.outdatedStateConstraint();
                List<String> statements = new ArrayList<>();
                statements.add(TableStatements.schemaLockTimeout());
                statements.addAll(TableStatements.schema(store.tableName()));
                if (outdated != null) {
                    statements.add(TableStatements.stateConstraint(store.tableName(), outdated));
                }
                store.pool().withTransaction(connection -> {
                    // instances starting at once take turns
                    Uni<Void> done = connection.query(TableStatements.schemaLock()).execute().replaceWithVoid();
                    for (String statement : statements) {
                        done = done.chain(() -> connection.query(statement).execute().replaceWithVoid());
                    }
                    return done;
                }).await().atMost(WITHIN);
            }
        } catch (StoreMisconfiguredException e) {
            throw e;
        } catch (RuntimeException e) {
            // an unreachable database: the store check says so, and deliveries are retried until it answers
            LOG.schemaNotUpdated(e.getMessage());
        }
    }
}
