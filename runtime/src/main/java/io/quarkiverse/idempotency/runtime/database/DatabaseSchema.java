package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
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

/**
 * The database store's table as this version needs it: checked (the store's {@link IdempotencyStore#check()}, at
 * startup and by the health check), and created or brought up to date at startup when
 * {@code quarkus.idempotency.database.schema-management} says so (by default in dev and test mode).
 */
@Singleton
public class DatabaseSchema {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(DatabaseSchema.class);

    private final DatabaseIdempotencyStore store;
    private final KeyTable table;
    private final Instance<IdempotentMethods> methods;
    // whether this start already said why the default left the table unpartitioned (IDEMP3008)
    private volatile boolean saidWhyUnpartitioned;

    @Inject
    public DatabaseSchema(DatabaseIdempotencyStore store, Instance<IdempotentMethods> methods) {
        this.store = store;
        this.table = store.table();
        this.methods = methods;
    }

    // Before the store is checked (StoreCheck observes the same event at the default priority).
    void update(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent event,
            IdempotencyConfig config, IdempotencyStore active) {
        // an application's own store replaces the database store: its table is none of this extension's business
        if (!(active instanceof DatabaseIdempotencyStore)) {
            return;
        }
        Mode mode = config.database().schemaManagement()
                .orElse(LaunchMode.current().isDevOrTest() ? Mode.UPDATE : Mode.VALIDATE);
        // partitions made ahead for the longest retention a key is written with, not only the configured one
        store.partitions().reach(longestRetention());
        try {
            if (mode == Mode.UPDATE) {
                updateSchema();
            }
            // Whatever the mode: a partitioned table's functions are the store's statements (a table created by
            // Flyway or Liquibase gets them here), and its partitions the purge's business, like deleting keys.
            if (store.readLayout()) {
                ensureFunctions();
                store.partitions().createAhead().await().indefinitely();
            } else if (store.plan().partitioning() == Partitioning.TIME && !saidWhyUnpartitioned && exists()) {
                LOG.notPartitioned(table.name());
            } else if (store.plan().partitioning() == null && !saidWhyUnpartitioned && exists()) {
                // the default: a table that could be moved is warned about; one that cannot is said why
                String against = againstPartitions();
                if (against == null) {
                    LOG.notPartitioned(table.name());
                } else {
                    LOG.unpartitionedByDefault(table.name(), against);
                }
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
     * Creates the table, or brings one of an earlier version up to date, in one transaction that instances starting
     * at once take in turn (a transaction-scoped advisory lock): every statement does nothing when its part is there.
     */
    public void updateSchema() {
        if (store.plan().partitioning() == null) {
            replaceIfEmpty();
        }
        table.transaction(c -> {
            try (Statement s = c.createStatement()) {
                s.execute(TableStatements.schemaLock());
                Boolean partitioned = partitioned(c);
                if (partitioned == null) {
                    partitioned = createsPartitioned(c);
                }
                // Up to date (every start but the first after an upgrade): no DDL, so no table lock that would queue
                // the running instances' claims behind this one.
                if (partitioned ? !partitionedUpToDate(c) : !upToDate(c)) {
                    s.execute(TableStatements.schemaLockTimeout());
                    for (String statement : partitioned ? PartitionStatements.schema(table.name())
                            : TableStatements.schema(table.name())) {
                        s.execute(statement);
                    }
                    TableChecks.StateChecks stateChecks = stateChecks(c);
                    if (stateChecks != null) {
                        s.execute(stateChecks.drop(table.name()));
                    }
                }
                return null;
            }
        }, "Could not create or update the idempotency table '" + table.name() + "'");
        // partitions asked for explicitly, and a table without them: moved while consumers run
        if (store.plan().partitioning() == Partitioning.TIME && !store.readLayout()) {
            moveToPartitions();
        }
    }

    /**
     * Moves an unpartitioned table to partitions while consumers run: its keys are honoured until they expire, then
     * it is dropped whole (see {@link PartitionMigration}).
     *
     * @throws StoreMisconfiguredException when the server or the table's name cannot have partitions, or the table has
     *         what a move would break or lose (the application's user does not own it, a view or another table's
     *         foreign key or a table inheriting depends on it, privileges granted, triggers, row security): its layout
     *         is not changed then
     */
    public void moveToPartitions() {
        if (store.readLayout()) {
            return; // moved already
        }
        table.onItsOwn(() -> table.connect(c -> {
            JdbcTableChecks.checkPartitionable(c, table.name());
            if (PartitionStatements.nameOf(table.name()).length() > PartitionStatements.LONGEST_NAME) {
                throw new StoreMisconfiguredException("The idempotency table's name '" + table.name() + "' leaves no"
                        + " room for its partitions' names (at most " + PartitionStatements.LONGEST_NAME
                        + " characters when partitioned)", null);
            }
            // checked before the move's long steps, which would otherwise run at each start to fail at its swap, or
            // swap a table whose views would read only its old keys and whose grants the new one would lack
            String against = JdbcTableChecks.againstReplacing(c, table.name());
            if (against != null) {
                throw new StoreMisconfiguredException("The idempotency table '" + table.name() + "' cannot be moved to"
                        + " partitions: " + against + ". Its layout was not changed. Remove what is in the way and"
                        + " make it again on the partitioned table once moved, or keep one table"
                        + " (quarkus.idempotency.database.partitioning=none)", null);
            }
            return null;
        }, "Could not check the idempotency table '" + table.name() + "'"));
        if (!new PartitionMigration(store, longestRetention()).run()) {
            saidWhyUnpartitioned = true; // another instance moves it: no warning asking for the move
        }
    }

    // The longest retention this application writes keys with: the configured one, or a method's, channel's or
    // scope's longer one (IdempotentMethods starts from the configured one).
    private Duration longestRetention() {
        return methods.isResolvable() ? methods.get().longestRetention() : store.plan().retention();
    }

    /**
     * @return whether a table created now is partitioned: when configured so, or by default where the server, the
     *         datasource and the table's name allow it
     * @throws StoreMisconfiguredException when partitions are asked for and the server or the table's name cannot
     *         have them
     */
    private boolean createsPartitioned(Connection c) throws SQLException {
        Partitioning wanted = store.plan().partitioning();
        if (wanted == Partitioning.NONE) {
            return false;
        }
        if (wanted == null) {
            String against = JdbcTableChecks.againstPartitions(c, table.name());
            if (against != null) {
                LOG.unpartitionedByDefault(table.name(), against);
                saidWhyUnpartitioned = true;
            }
            return against == null;
        }
        int server = server(c);
        if (server < PartitionPlan.MINIMUM_SERVER) {
            throw new StoreMisconfiguredException("quarkus.idempotency.database.partitioning=time needs PostgreSQL "
                    + PartitionPlan.MINIMUM_SERVER + " or later, which detaches a partition without blocking the"
                    + " table; this server is PostgreSQL " + server + ". Unset it, or set it to none", null);
        }
        if (PartitionStatements.nameOf(table.name()).length() > PartitionStatements.LONGEST_NAME) {
            throw new StoreMisconfiguredException("The idempotency table's name '" + table.name() + "' leaves no room"
                    + " for its partitions' names (at most " + PartitionStatements.LONGEST_NAME + " characters when"
                    + " partitioned); shorten quarkus.idempotency.database.table, or set"
                    + " quarkus.idempotency.database.partitioning=none", null);
        }
        return true;
    }

    /**
     * The default asks for partitions: replaces an unpartitioned table holding no key (one Hibernate ORM, or a migration
     * tool in dev and test mode, just made) by a partitioned one, in a transaction of its own that instances starting at
     * once take in turn, where the application's database user owns it, may create tables in its schema, and nothing
     * depends on it (a view, a foreign key). Its exclusive lock waits at most 2 s for running transactions, and the table
     * is checked empty again under it. Anything that fails (a dependent this did not see, a right missing for the new
     * table) rolls the whole replacement back: the table stays as it was, and startup says why (IDEMP3008). A table
     * holding keys keeps its layout: moving it is asked for on one instance ({@code partitioning=time}, see
     * {@link PartitionMigration}), and startup warns.
     */
    private void replaceIfEmpty() {
        try {
            table.transaction(c -> {
                try (Statement s = c.createStatement()) {
                    s.execute(TableStatements.schemaLock());
                    if (!Boolean.FALSE.equals(partitioned(c))) {
                        return null; // missing (created below), or partitioned already
                    }
                    String against = againstReplacing(c);
                    if (against != null) {
                        LOG.unpartitionedByDefault(table.name(), against);
                        saidWhyUnpartitioned = true;
                        return null;
                    }
                    if (!empty(c)) {
                        return null;
                    }
                    s.execute("SET LOCAL lock_timeout = '2s'");
                    s.execute("LOCK TABLE " + table.name() + " IN ACCESS EXCLUSIVE MODE");
                    if (!empty(c)) {
                        return null;
                    }
                    s.execute("DROP TABLE " + table.name());
                    s.execute(TableStatements.schemaLockTimeout());
                    for (String statement : PartitionStatements.schema(table.name())) {
                        s.execute(statement);
                    }
                }
                return null;
            }, "Could not make the empty idempotency table '" + table.name() + "' again, partitioned");
        } catch (StoreMisconfiguredException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.unpartitionedByDefault(table.name(), "making it again, partitioned, failed (" + e.getMessage()
                    + (e.getCause() != null ? ": " + e.getCause().getMessage() : "") + ")");
            saidWhyUnpartitioned = true;
        }
    }

    // Why the default leaves the existing table unpartitioned; null when nothing but its keys would stop a move.
    private String againstPartitions() {
        return table.onItsOwn(() -> table.connect(this::againstReplacing,
                "Could not read the layout of the idempotency table '" + table.name() + "'"));
    }

    // Why an existing unpartitioned table cannot be made partitioned here; null when it can.
    private String againstReplacing(Connection c) throws SQLException {
        String against = JdbcTableChecks.againstPartitions(c, table.name());
        return against != null ? against : JdbcTableChecks.againstReplacing(c, table.name());
    }

    private boolean empty(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT NOT EXISTS (SELECT 1 FROM " + table.name() + ")")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    private boolean exists() {
        return table.onItsOwn(() -> table.connect(c -> partitioned(c) != null,
                "Could not read the layout of the idempotency table '" + table.name() + "'"));
    }

    // Whether the table is partitioned; null when there is no table.
    private Boolean partitioned(Connection c) throws SQLException {
        return JdbcCalls.answered(TableChecks.partitioned(new JdbcCalls(c), table.name()));
    }

    private static int server(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(PartitionStatements.server())) {
            rs.next();
            return rs.getInt(1);
        }
    }

    // The functions, the claims index, the columns and the state constraint are there.
    private boolean partitionedUpToDate(Connection c) throws SQLException {
        return JdbcTableChecks.functionsPresent(c, table.name())
                && JdbcCalls.answered(TableChecks.partitionedUpToDate(new JdbcCalls(c), table.name()));
    }

    /**
     * Creates or replaces the functions a partitioned table's keys are written with, unless this version's are there
     * (each carries a comment naming its version).
     */
    public void ensureFunctions() {
        table.transaction(c -> {
            try (Statement s = c.createStatement()) {
                s.execute(TableStatements.schemaLock());
                if (!JdbcTableChecks.functionsPresent(c, table.name())) {
                    s.execute(TableStatements.schemaLockTimeout());
                    for (String statement : PartitionStatements.functions(table.name())) {
                        s.execute(statement);
                    }
                }
            }
            return null;
        }, "Could not create the functions of the idempotency table '" + table.name() + "'");
    }

    private List<String> missingColumns(Connection c) throws SQLException {
        return JdbcCalls.answered(TableChecks.missingColumns(new JdbcCalls(c), table.name()));
    }

    private boolean upToDate(Connection c) throws SQLException {
        return JdbcCalls.answered(TableChecks.upToDate(new JdbcCalls(c), table.name()));
    }

    // The state column's check constraints of an earlier version or of Hibernate ORM's table, to drop them.
    private TableChecks.StateChecks stateChecks(Connection c) throws SQLException {
        return JdbcCalls.answered(TableChecks.stateChecks(new JdbcCalls(c), table.name()));
    }
}
