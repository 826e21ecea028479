package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;

/**
 * The checks of the key table that only JDBC can make (the database product, the transactions' isolation, a
 * partitioned table's functions), with those {@link TableChecks} makes everywhere: what the database store's
 * {@link DatabaseIdempotencyStore#check()} and {@link DatabaseSchema} ask before they use a table.
 */
final class JdbcTableChecks {

    private JdbcTableChecks() {
    }

    /** The table does not exist. */
    private static final String UNDEFINED_TABLE = "42P01";

    /**
     * Checks that the table is there as this version needs it, in a transaction of its own.
     *
     * @return whether it is partitioned by time
     * @throws StoreMisconfiguredException when the table is missing or from an older version, or the database is not
     *         PostgreSQL, naming the remedy
     */
    static boolean check(KeyTable table) {
        return table.onItsOwn(() -> {
            try {
                return table.connect(c -> check(c, table.name()), "Could not check the idempotency table '"
                        + table.name() + "'");
            } catch (IllegalStateException e) {
                if (e.getCause() instanceof SQLException sql && UNDEFINED_TABLE.equals(sql.getSQLState())) {
                    throw new StoreMisconfiguredException(missingTable(table.name()), sql);
                }
                throw e;
            }
        });
    }

    /**
     * Checks that the table is there as this version needs it.
     *
     * @return whether it is partitioned by time
     * @throws StoreMisconfiguredException when the table is from an older version, the database is not PostgreSQL, or
     *         its connections commit asynchronously by default, naming the remedy
     */
    private static boolean check(Connection c, String table) throws SQLException {
        String product = c.getMetaData().getDatabaseProductName();
        if (!"PostgreSQL".equalsIgnoreCase(product)) {
            throw new StoreMisconfiguredException("The idempotency database store runs PostgreSQL's SQL, but its"
                    + " datasource is " + product + "; use a PostgreSQL datasource, or supply an IdempotencyStore bean"
                    + " of your own", null);
        }
        SqlCalls db = new JdbcCalls(c);
        String asynchronous = JdbcCalls.answered(TableChecks.asynchronousByDefault(db));
        if (asynchronous != null) {
            throw new StoreMisconfiguredException(asynchronous, null);
        }
        JdbcCalls.answered(db.query(TableStatements.check(table)));
        boolean partitioned = Boolean.TRUE.equals(JdbcCalls.answered(TableChecks.partitioned(db, table)));
        List<String> missing = JdbcCalls.answered(TableChecks.missingColumns(db, table));
        List<String> remedy = new ArrayList<>(partitioned ? PartitionStatements.schema(table)
                : TableStatements.schema(table));
        if (partitioned) {
            checkPartitionable(c, table);
            if (!functionsPresent(c, table)) {
                missing.add("the functions " + String.join(", ", PartitionStatements.functionNames(table))
                        + " that write keys into its partitions");
            }
        }
        TableChecks.validateStateChecks(JdbcCalls.answered(TableChecks.stateChecks(db, table)), c.getMetaData().getURL(), table,
                missing, remedy);
        if (!missing.isEmpty()) {
            throw new StoreMisconfiguredException(TableChecks.olderVersion(table, missing, remedy,
                    "quarkus.idempotency.database.schema-management=update does it at startup; the shipped Flyway"
                            + " migrations and Liquibase changelog do too"),
                    null);
        }
        return partitioned;
    }

    // A partitioned table needs a server that detaches partitions concurrently, and READ COMMITTED (see
    // PartitionStatements): refused at startup rather than failing every write.
    static void checkPartitionable(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(PartitionStatements.server())) {
            rs.next();
            if (rs.getInt(1) < PartitionPlan.MINIMUM_SERVER) {
                throw new StoreMisconfiguredException("The idempotency table '" + table + "' is partitioned,"
                        + " which needs PostgreSQL " + PartitionPlan.MINIMUM_SERVER + " or later; this server is "
                        + rs.getInt(1), null);
            }
            if (!"read committed".equals(rs.getString(2))
                    || c.getTransactionIsolation() != Connection.TRANSACTION_READ_COMMITTED) {
                throw new StoreMisconfiguredException("The idempotency table '" + table + "' is partitioned:"
                        + " its keys are unique only if every statement sees what committed before it, which needs"
                        + " READ COMMITTED transactions; the datasource's are " + rs.getString(2) + " (JDBC level "
                        + c.getTransactionIsolation() + "). Use read committed on this datasource"
                        + " (quarkus.datasource.jdbc.transaction-isolation-level), or an unpartitioned table", null);
            }
        }
    }

    /**
     * Why a table cannot be partitioned here, for the default layout, which then falls back to one table.
     *
     * @return null when it can: PostgreSQL 14 or later, READ COMMITTED transactions, a name with room for its
     *         partitions'; else the reason
     */
    static String againstPartitions(Connection c, String table) throws SQLException {
        // the datasource's own isolation level, which JDBC sets on its connections beyond the database's default
        if (c.getTransactionIsolation() != Connection.TRANSACTION_READ_COMMITTED) {
            return "the datasource's transactions are not READ COMMITTED (JDBC level " + c.getTransactionIsolation()
                    + "), and keys on partitions are unique only under it";
        }
        return JdbcCalls.answered(TableChecks.againstPartitions(new JdbcCalls(c), table));
    }

    /**
     * Why an existing unpartitioned table cannot be replaced or moved by the application's database user.
     *
     * @return null when it can: the user owns the table (or is a member of its owner's role), may create tables in its
     *         schema, no other object depends on it (a view, another table's foreign key, a table inheriting from it),
     *         and it has nothing a new table would lack (privileges granted, triggers, row security); else the reason
     */
    static String againstReplacing(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_has_role(current_user, t.relowner, 'USAGE'),"
                + " has_schema_privilege(current_user, t.relnamespace, 'CREATE'),"
                // anything but the table's own check constraints (which depend on its columns): a view, another
                // table's foreign key, a function's body; or on its row type: another table's column, a function's
                // argument
                + " EXISTS (SELECT 1 FROM pg_depend d WHERE d.deptype = 'n' AND ((d.refclassid = 'pg_class'::regclass"
                + " AND d.refobjid = t.oid AND NOT (d.classid = 'pg_constraint'::regclass AND (SELECT conrelid FROM"
                + " pg_constraint WHERE oid = d.objid) = t.oid)) OR (d.refclassid = 'pg_type'::regclass AND d.refobjid ="
                + " t.reltype))),"
                // what a new table would not have: a privilege granted beyond the owner's own and the default ones
                // of the user who creates it, whoever granted them (a REVOKE leaves an ACL behind that grants nothing
                // more), triggers, row security
                + " EXISTS (SELECT 1 FROM aclexplode(t.relacl) g WHERE NOT EXISTS (SELECT 1 FROM aclexplode("
                + "acldefault('r', t.relowner) || coalesce((SELECT array_agg(d.item) FROM pg_default_acl a,"
                + " unnest(a.defaclacl) d(item) WHERE a.defaclrole = (SELECT oid FROM pg_roles WHERE rolname ="
                + " current_user) AND a.defaclobjtype = 'r' AND a.defaclnamespace IN (t.relnamespace, 0)),"
                + " '{}'::aclitem[])) k WHERE k.grantee = g.grantee AND k.privilege_type = g.privilege_type"
                + " AND (k.is_grantable OR NOT g.is_grantable))) OR t.relrowsecurity"
                + " OR EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = t.oid AND NOT g.tgisinternal),"
                // a table that inherits or is inherited from, which cannot be attached as a partition
                + " EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhparent = t.oid OR i.inhrelid = t.oid)"
                + " FROM pg_class t WHERE t.oid = to_regclass(?)")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return "it is missing";
                }
                if (!rs.getBoolean(1)) {
                    return "the database user does not own it";
                }
                if (!rs.getBoolean(2)) {
                    return "the database user may not create tables in its schema";
                }
                if (rs.getBoolean(5)) { // before the dependents: a child table is one
                    return "it inherits from another table, or another table inherits from it";
                }
                if (rs.getBoolean(3)) {
                    return "other objects depend on it (a view, a foreign key, a function, a column of its row type)";
                }
                if (rs.getBoolean(4)) {
                    return "it has privileges granted, triggers or row security, which a new table would not have";
                }
                return null;
            }
        }
    }

    static boolean functionsPresent(Connection c, String table) throws SQLException {
        return JdbcCalls.answered(TableChecks.functionsPresent(new JdbcCalls(c), table));
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
                + String.join("; ", TableStatements.schema(table));

    }
}
