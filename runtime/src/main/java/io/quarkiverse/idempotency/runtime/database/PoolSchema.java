package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.Database.Partitioning;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.SchemaManagement.Mode;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;

/**
 * {@link DatabaseSchema} for an application with only the reactive client ({@link PoolIdempotencyStore}): at startup,
 * creates the table or brings it up to date when {@code quarkus.idempotency.database.schema-management} says so (by
 * default in dev and test mode), through the client, in one transaction that instances starting at once take in turn.
 * A new table is partitioned by time as over JDBC (by default where the server allows it, or when asked for); a
 * partitioned table gets its functions and its partitions ahead in every mode. An existing unpartitioned table keeps
 * its layout: the move of a table holding keys to partitions runs over JDBC only.
 */
@Singleton
public class PoolSchema {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(PoolSchema.class);
    private static final Duration WITHIN = Duration.ofSeconds(60);
    /** Why the table stays unpartitioned when it holds keys: said once per start. */
    private static final String NO_MOVE = "it exists unpartitioned, and moving a table to partitions runs over JDBC"
            + " only (DatabaseSchema.moveToPartitions(), or partitioning=time with schema-management=update, in an"
            + " application with a JDBC datasource on this database; see 'Moving a running table to partitions')";

    // Before the store is checked (StoreCheck observes the same event at the default priority).
    void update(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent event, IdempotencyConfig config,
            IdempotencyStore active, Instance<IdempotentMethods> methods) {
        if (!(active instanceof PoolIdempotencyStore store)) {
            return;
        }
        // partitions made ahead for the longest retention a key is written with: no write waits for one
        if (methods.isResolvable()) {
            store.partitions().reach(methods.get().longestRetention());
        }
        Mode mode = config.database().schemaManagement()
                .orElse(LaunchMode.current().isDevOrTest() ? Mode.UPDATE : Mode.VALIDATE);
        Partitioning wanted = store.plan().partitioning();
        try {
            boolean said = mode == Mode.UPDATE && update(store, wanted);
            Boolean partitioned = store.readLayout();
            if (Boolean.TRUE.equals(partitioned)) {
                // whatever the mode: the functions are the store's statements, the partitions the purge's business
                ensureFunctions(store);
                store.partitions().createAhead().await().atMost(WITHIN);
            } else if (Boolean.FALSE.equals(partitioned) && wanted == Partitioning.TIME) {
                throw new StoreMisconfiguredException("quarkus.idempotency.database.partitioning=time, but the"
                        + " idempotency table '" + store.tableName() + "' " + NO_MOVE + ". Move it so, or unset"
                        + " partitioning", null);
            } else if (Boolean.FALSE.equals(partitioned) && wanted == null && !said) {
                LOG.unpartitionedByDefault(store.tableName(), NO_MOVE);
            }
            // (a missing table is the store check's to report)
        } catch (StoreMisconfiguredException e) {
            throw e;
        } catch (RuntimeException e) {
            // an unreachable database: the store check says so, and deliveries are retried until it answers
            LOG.schemaNotUpdated(e.getMessage());
        }
    }

    /**
     * Creates the table, partitioned where asked or allowed, or brings it up to date; no DDL when it is (every start
     * but the first after an upgrade), so no table lock that would queue the running instances' claims.
     *
     * @return whether it said why the default left a new table unpartitioned
     */
    private static boolean update(PoolIdempotencyStore store, Partitioning wanted) {
        String table = store.tableName();
        boolean[] said = { false };
        store.pool().withTransaction(connection -> {
            SqlCalls db = new PoolCalls(connection);
            // instances starting at once take turns
            return db.execute(TableStatements.schemaLock())
                    .chain(() -> TableChecks.partitioned(db, table))
                    .chain(layout -> layout != null ? Uni.createFrom().item(layout)
                            : createsPartitioned(db, table, wanted).invoke(partitioned -> said[0] = !partitioned
                                    && wanted == null))
                    .chain(partitioned -> outdated(db, table, partitioned).chain(db::executeAll));
        }).await().atMost(WITHIN);
        return said[0];
    }

    /**
     * @return whether a table created now is partitioned: when asked for (refused where the server or the name cannot
     *         have partitions), or by default where they allow it (else said why)
     */
    private static Uni<Boolean> createsPartitioned(SqlCalls db, String table, Partitioning wanted) {
        if (wanted == Partitioning.NONE) {
            return Uni.createFrom().item(false);
        }
        return TableChecks.againstPartitions(db, table).map(against -> {
            if (against == null) {
                return true;
            }
            if (wanted == Partitioning.TIME) {
                throw new StoreMisconfiguredException("quarkus.idempotency.database.partitioning=time, but the"
                        + " idempotency table '" + table + "' cannot be partitioned: " + against
                        + ". Unset it, or set it to none", null);
            }
            LOG.unpartitionedByDefault(table, against);
            return false;
        });
    }

    /** @return the statements that create the table in its layout or bring it up to date; none when it is */
    private static Uni<List<String>> outdated(SqlCalls db, String table, boolean partitioned) {
        Uni<Boolean> upToDate = partitioned
                ? TableChecks.functionsPresent(db, table).chain(functions -> functions
                        ? TableChecks.partitionedUpToDate(db, table)
                        : Uni.createFrom().item(false))
                : TableChecks.upToDate(db, table);
        return upToDate.chain(current -> current ? Uni.createFrom().item(List.<String> of())
                : TableChecks.stateChecks(db, table).map(stateChecks -> {
                    List<String> statements = new ArrayList<>();
                    statements.add(TableStatements.schemaLockTimeout());
                    statements.addAll(partitioned ? PartitionStatements.schema(table) : TableStatements.schema(table));
                    if (stateChecks != null) {
                        statements.add(stateChecks.drop(table));
                    }
                    return statements;
                }));
    }

    /** Creates or replaces a partitioned table's functions, unless this version's are there (Flyway's table). */
    private static void ensureFunctions(PoolIdempotencyStore store) {
        if (store.functionsPresent()) {
            return;
        }
        String table = store.tableName();
        store.pool().withTransaction(connection -> {
            SqlCalls db = new PoolCalls(connection);
            return db.execute(TableStatements.schemaLock())
                    .chain(() -> TableChecks.functionsPresent(db, table))
                    .chain(present -> {
                        if (present) {
                            return Uni.createFrom().voidItem();
                        }
                        List<String> statements = new ArrayList<>();
                        statements.add(TableStatements.schemaLockTimeout());
                        statements.addAll(PartitionStatements.functions(table));
                        return db.executeAll(statements);
                    });
        }).await().atMost(WITHIN);
    }
}
