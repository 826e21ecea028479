package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.Database.Partitioning;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.SchemaManagement.Mode;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * {@link DatabaseSchema} for an application with only the reactive client ({@link PoolIdempotencyStore}): at startup,
 * creates the table or brings it up to date when {@code quarkus.idempotency.database.schema-management} says so (by
 * default in dev and test mode), through the client, in one transaction that instances starting at once take in turn.
 * A table partitioned by time, asked for or found, is refused: its partitions are managed over JDBC only.
 */
@Singleton
public class PoolSchema {

    private static final Logger LOG = Logger.getLogger(PoolSchema.class);
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
            if (partitioned(store)) {
                throw new StoreMisconfiguredException("The idempotency table '" + store.table() + "' is partitioned by"
                        + " time, which an application with only the reactive PostgreSQL client does not support yet:"
                        + " add a JDBC datasource (quarkus-jdbc-postgresql) on the same database", null);
            }
            // Up to date (every start but the first after an upgrade): no DDL, so no table lock that would queue the
            // running instances' claims behind this one.
            if (mode == Mode.UPDATE && !upToDate(store)) {
                String outdated = store.outdatedStateConstraint();
                List<String> statements = new ArrayList<>();
                statements.add(RecordStatements.schemaLockTimeout());
                statements.addAll(RecordStatements.schema(store.table()));
                if (outdated != null) {
                    statements.add(RecordStatements.stateConstraint(store.table(), outdated));
                }
                store.pool().withTransaction(connection -> {
                    // instances starting at once take turns
                    Uni<Void> done = connection.query(RecordStatements.schemaLock()).execute().replaceWithVoid();
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
            LOG.warnf("Could not create or update the idempotency table at startup: %s", e.getMessage());
        }
    }

    // The table, its two indexes, every column and the current state constraint are there.
    private static boolean upToDate(PoolIdempotencyStore store) {
        String table = store.table();
        Row present = store.pool().preparedQuery(PoolKeys.numbered(RecordStatements.present()))
                .execute(Tuple.of(table, table + "_expires_at", table + "_claims")).await().atMost(WITHIN).iterator()
                .next();
        return present.getBoolean(0) && present.getBoolean(1) && present.getBoolean(2)
                && store.missingColumns().isEmpty() && store.outdatedStateConstraint() == null;
    }

    private static boolean partitioned(PoolIdempotencyStore store) {
        RowSet<Row> rows = store.pool().preparedQuery(PoolKeys.numbered(PartitionStatements.layout()))
                .execute(Tuple.of(store.table())).await().atMost(WITHIN);
        return rows.size() > 0 && Boolean.TRUE.equals(rows.iterator().next().getBoolean(0));
    }
}
