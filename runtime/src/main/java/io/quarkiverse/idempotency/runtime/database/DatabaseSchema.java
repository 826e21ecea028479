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

    private final KeyTable table;

    @Inject
    public DatabaseSchema(DatabaseIdempotencyStore store) {
        this(store.table());
    }

    DatabaseSchema(KeyTable table) {
        this.table = table;
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
        if (mode != Mode.UPDATE) {
            return;
        }
        try {
            updateSchema();
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
        table.onItsOwn(() -> table.connect(c -> {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute(RecordStatements.schemaLock());
                // Up to date (every start but the first after an upgrade): no DDL, so no table lock that would queue
                // the running instances' claims behind this one.
                if (!upToDate(c)) {
                    s.execute(RecordStatements.schemaLockTimeout());
                    for (String statement : RecordStatements.schema(table.name())) {
                        s.execute(statement);
                    }
                    String outdated = outdatedStateConstraint(c);
                    if (outdated != null) {
                        s.execute(RecordStatements.stateConstraint(table.name(), outdated));
                    }
                }
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
            return null;
        }, "Could not create or update the idempotency table '" + table.name() + "'"));
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
        List<String> missing = missingColumns(c);
        List<String> remedy = new ArrayList<>(RecordStatements.schema(table.name()));
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
        return null;
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
