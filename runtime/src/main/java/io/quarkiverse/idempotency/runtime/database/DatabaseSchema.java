package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
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

/**
 * The database store's table as this version needs it: checked (the store's {@link IdempotencyStore#check()}, at
 * startup and by the health check), and created or brought up to date at startup when
 * {@code quarkus.idempotency.database.schema-management} says so (by default in dev and test mode).
 */
@Singleton
public class DatabaseSchema {

    private static final Logger LOG = Logger.getLogger(DatabaseSchema.class);
    private static final String UNDEFINED_TABLE = "42P01";

    private final DatabaseIdempotencyStore store;
    private final KeyTable table;

    @Inject
    public DatabaseSchema(DatabaseIdempotencyStore store) {
        this.store = store;
        this.table = store.table();
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
        try {
            if (mode == Mode.UPDATE) {
                updateSchema();
            }
            // Whatever the mode: a partitioned table's functions are the store's statements (a table created by
            // Flyway or Liquibase gets them here), and its partitions the purge's business, like deleting keys.
            if (store.readLayout()) {
                ensureFunctions();
                store.partitions().createAhead();
            } else if (store.plan().partitioning() == Partitioning.TIME) {
                LOG.infof("The idempotency table '%s' is not partitioned (it was created unpartitioned, or by Hibernate"
                        + " ORM): the purge job deletes its expired keys in batches. The operations guide shows how to"
                        + " move it to partitions while consumers run.", table.name());
            }
        } catch (StoreMisconfiguredException e) {
            throw e;
        } catch (RuntimeException e) {
            // an unreachable database: the store check says so, and deliveries are retried until it answers
            LOG.warnf("Could not create or update the idempotency table at startup: %s", e.getMessage());
        }
    }

    /**
     * Creates the table, or brings one of an earlier version up to date, in one transaction that instances starting
     * at once take in turn (a transaction-scoped advisory lock): every statement does nothing when its part is there.
     */
    public void updateSchema() {
        table.transaction(c -> {
            try (Statement s = c.createStatement()) {
                s.execute(RecordStatements.schemaLock());
                Boolean partitioned = partitioned(c);
                if (partitioned == null) {
                    partitioned = createsPartitioned(c);
                }
                // Up to date (every start but the first after an upgrade): no DDL, so no table lock that would queue
                // the running instances' claims behind this one.
                if (partitioned ? !partitionedUpToDate(c) : !upToDate(c)) {
                    s.execute(RecordStatements.schemaLockTimeout());
                    for (String statement : partitioned ? partitionedSchema(table.name())
                            : RecordStatements.schema(table.name())) {
                        s.execute(statement);
                    }
                    String outdated = outdatedStateConstraint(c);
                    if (outdated != null) {
                        s.execute(RecordStatements.stateConstraint(table.name(), outdated));
                    }
                }
            }
            return null;
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
     * @throws StoreMisconfiguredException when the server or the table's name cannot have partitions
     */
    public void moveToPartitions() {
        table.onItsOwn(() -> table.connect(c -> {
            checkPartitionable(c);
            if (PartitionStatements.nameOf(table.name()).length() > PartitionStatements.LONGEST_NAME) {
                throw new StoreMisconfiguredException("The idempotency table's name '" + table.name() + "' leaves no"
                        + " room for its partitions' names (at most " + PartitionStatements.LONGEST_NAME
                        + " characters when partitioned)", null);
            }
            return null;
        }, "Could not check the idempotency table '" + table.name() + "'"));
        new PartitionMigration(store).run();
    }

    /**
     * @return whether a table created now is partitioned: only when configured so
     * @throws StoreMisconfiguredException when partitions are asked for and the server or the table's name cannot
     *         have them
     */
    private boolean createsPartitioned(Connection c) throws SQLException {
        Partitioning wanted = store.plan().partitioning();
        int server = server(c);
        if (wanted != Partitioning.TIME) {
            return false;
        }
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

    /** The statements that create a partitioned table, or bring one up to date. */
    static List<String> partitionedSchema(String table) {
        List<String> statements = new ArrayList<>();
        if (table.indexOf('.') > 0) {
            statements.add("CREATE SCHEMA IF NOT EXISTS " + table.substring(0, table.indexOf('.')));
        }
        statements.add(PartitionStatements.createTable(table));
        for (String column : RecordStatements.ADDED_COLUMNS) {
            statements.add("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + column + " "
                    + RecordStatements.COLUMNS.get(column));
        }
        // The age of the oldest live claim (a metric, and the Dev UI) reads only the claims.
        statements.add("CREATE INDEX IF NOT EXISTS " + PartitionStatements.nameOf(table) + "_claims ON " + table
                + " (recorded_at) WHERE state = 'CLAIMED'");
        statements.addAll(PartitionStatements.functions(table));
        return statements;
    }

    // Whether the table is partitioned; null when there is no table.
    private Boolean partitioned(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(PartitionStatements.layout())) {
            ps.setString(1, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getBoolean(1) : null;
            }
        }
    }

    private static int server(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(PartitionStatements.server())) {
            rs.next();
            return rs.getInt(1);
        }
    }

    // The functions, the claims index, the columns and the state constraint are there.
    private boolean partitionedUpToDate(Connection c) throws SQLException {
        return functionsPresent(c) && missingColumns(c).isEmpty() && outdatedStateConstraint(c) == null
                && present(c, PartitionStatements.nameOf(table.name()) + "_claims");
    }

    private boolean functionsPresent(Connection c) throws SQLException {
        List<String> names = PartitionStatements.functionNames(table.name());
        try (PreparedStatement ps = c.prepareStatement(PartitionStatements.functionsPresent())) {
            for (int i = 0; i < names.size(); i++) {
                ps.setString(i + 1, names.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    private boolean present(Connection c, String index) throws SQLException {
        String schema = table.name().indexOf('.') > 0 ? table.name().substring(0, table.name().indexOf('.') + 1) : "";
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, schema + index);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * Creates or replaces the functions a partitioned table's keys are written with, unless this version's are there
     * (each carries a comment naming its version).
     */
    public void ensureFunctions() {
        table.transaction(c -> {
            try (Statement s = c.createStatement()) {
                s.execute(RecordStatements.schemaLock());
                if (!functionsPresent(c)) {
                    s.execute(RecordStatements.schemaLockTimeout());
                    for (String statement : PartitionStatements.functions(table.name())) {
                        s.execute(statement);
                    }
                }
            }
            return null;
        }, "Could not create the functions of the idempotency table '" + table.name() + "'");
    }

    /**
     * Checks that the table is there as this version needs it.
     *
     * @throws StoreMisconfiguredException when the table is missing or from an older version, or the database is not
     *         PostgreSQL, naming the remedy
     */
    void check() {
        table.onItsOwn(() -> {
            try {
                return table.connect(this::check, "Could not check the idempotency table '" + table.name() + "'");
            } catch (IllegalStateException e) {
                if (e.getCause() instanceof SQLException sql && UNDEFINED_TABLE.equals(sql.getSQLState())) {
                    throw new StoreMisconfiguredException(missingTable(table.name()), sql);
                }
                throw e;
            }
        });
    }

    private Void check(Connection c) throws SQLException {
        String product = c.getMetaData().getDatabaseProductName();
        if (!"PostgreSQL".equalsIgnoreCase(product)) {
            throw new StoreMisconfiguredException("The idempotency database store runs PostgreSQL's SQL, but its"
                    + " datasource is " + product + "; use a PostgreSQL datasource, or supply an IdempotencyStore bean"
                    + " of your own", null);
        }
        try (PreparedStatement ps = c.prepareStatement(RecordStatements.check(table.name()))) {
            ps.executeQuery().close();
        }
        boolean partitioned = Boolean.TRUE.equals(partitioned(c));
        List<String> missing = missingColumns(c);
        List<String> remedy = new ArrayList<>(partitioned ? partitionedSchema(table.name())
                : RecordStatements.schema(table.name()));
        if (partitioned) {
            checkPartitionable(c);
            if (!functionsPresent(c)) {
                missing.add("the functions " + String.join(", ", PartitionStatements.functionNames(table.name()))
                        + " that write keys into its partitions");
            }
        }
        String outdated = outdatedStateConstraint(c);
        if (outdated != null) {
            // e.g. a table Hibernate ORM's schema update brought forward: it adds columns, never constraints
            missing.add("the states FAILED and DEAD_LETTERED in its state check constraint " + outdated);
            remedy.add(RecordStatements.stateConstraint(table.name(), outdated));
        }
        if (!missing.isEmpty()) {
            throw new StoreMisconfiguredException("The idempotency table '" + table.name() + "' is from an older"
                    + " version of the extension: it lacks " + String.join(", ", missing) + ". Bring it up to date with "
                    + String.join("; ", remedy) + " (quarkus.idempotency.database.schema-management=update does it at"
                    + " startup; the shipped Flyway migrations and Liquibase changelog do too)", null);
        }
        store.layout(partitioned);
        return null;
    }

    // A partitioned table needs a server that detaches partitions concurrently, and READ COMMITTED (see
    // PartitionStatements): refused at startup rather than failing every write.
    private void checkPartitionable(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(PartitionStatements.server())) {
            rs.next();
            if (rs.getInt(1) < PartitionPlan.MINIMUM_SERVER) {
                throw new StoreMisconfiguredException("The idempotency table '" + table.name() + "' is partitioned,"
                        + " which needs PostgreSQL " + PartitionPlan.MINIMUM_SERVER + " or later; this server is "
                        + rs.getInt(1), null);
            }
            if (!"read committed".equals(rs.getString(2))
                    || c.getTransactionIsolation() != Connection.TRANSACTION_READ_COMMITTED) {
                throw new StoreMisconfiguredException("The idempotency table '" + table.name() + "' is partitioned:"
                        + " its keys are unique only if every statement sees what committed before it, which needs"
                        + " READ COMMITTED transactions; the datasource's are " + rs.getString(2) + " (JDBC level "
                        + c.getTransactionIsolation() + "). Use read committed on this datasource"
                        + " (quarkus.datasource.jdbc.transaction-isolation-level), or an unpartitioned table", null);
            }
        }
    }

    private List<String> missingColumns(Connection c) throws SQLException {
        Set<String> present = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(RecordStatements.columnsOf())) {
            ps.setString(1, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    present.add(rs.getString(1));
                }
            }
        }
        List<String> missing = new ArrayList<>();
        for (String column : RecordStatements.COLUMNS.keySet()) {
            if (!present.contains(column)) {
                missing.add(column);
            }
        }
        return missing;
    }

    // The table, its columns, its state constraint and its two indexes are all there as this version wants them.
    private boolean upToDate(Connection c) throws SQLException {
        String name = table.name();
        try (PreparedStatement ps = c.prepareStatement(RecordStatements.present())) {
            ps.setString(1, name);
            ps.setString(2, name + "_expires_at");
            ps.setString(3, name + "_claims");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1) || !rs.getBoolean(2) || !rs.getBoolean(3)) {
                    return false;
                }
            }
        }
        return missingColumns(c).isEmpty() && outdatedStateConstraint(c) == null;
    }

    // The state column's check constraint of an earlier version lists fewer states: its name, to replace it.
    private String outdatedStateConstraint(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(RecordStatements.stateChecks())) {
            ps.setString(1, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (!rs.getString(2).contains("DEAD_LETTERED")) {
                        return rs.getString(1);
                    }
                }
            }
        }
        return null;
    }

    /** @return the message naming the remedies for a missing table */
    static String missingTable(String table) {
        return "The idempotency table '" + table + "' does not exist. Create it in one of these ways: let the extension"
                + " create it at startup (quarkus.idempotency.database.schema-management=update); with Flyway, add"
                + " classpath:db/idempotency/flyway to quarkus.flyway.locations (a repeatable migration, named after"
                + " this table); with Liquibase, include db/idempotency/liquibase/idempotency-changelog.xml"
                + (IdempotencyRecord.DEFAULT_TABLE.equals(table) ? ""
                        : " (change-log parameter idempotency.table=" + table.substring(table.indexOf('.') + 1) + ")")
                + "; or with Hibernate ORM (quarkus.hibernate-orm.schema-management.strategy=update). The statements: "
                + String.join("; ", RecordStatements.schema(table));
    }
}
