package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The statements that create, check and read the key table, apart from the keys' own protocol ({@link RecordStatements},
 * {@link KeyProtocol}): its schema, as the extension creates and updates it and as the shipped migrations have it, the
 * checks of a table someone else made, and the reads of the Dev UI.
 */
public final class TableStatements {

    private TableStatements() {
    }

    /** The columns the statements need, each with the definition that adds it to a table of an older version. */
    public static final Map<String, String> COLUMNS = columns();

    private static Map<String, String> columns() {
        Map<String, String> columns = new LinkedHashMap<>();
        columns.put("scoped_key", "VARCHAR(255) NOT NULL PRIMARY KEY");
        columns.put("scope", "VARCHAR(255) NOT NULL");
        columns.put("state", "VARCHAR(16) NOT NULL");
        columns.put("claimed_by", "VARCHAR(128)");
        columns.put("recorded_at", "TIMESTAMP WITH TIME ZONE NOT NULL");
        columns.put("expires_at", "TIMESTAMP WITH TIME ZONE NOT NULL");
        columns.put("lease_until", "TIMESTAMP WITH TIME ZONE");
        columns.put("attempts", "INTEGER NOT NULL DEFAULT 0");
        columns.put("last_failure", "VARCHAR(1000)");
        columns.put("message_id", "VARCHAR(255)");
        columns.put("fingerprint", "VARCHAR(64)");
        return Collections.unmodifiableMap(columns);
    }

    /**
     * A LIKE pattern (a SQL literal) for the definition of a check constraint listing the states, as PostgreSQL shows it
     * ({@code ((state)::text = ANY ((ARRAY['CLAIMED'::character varying, 'CONFIRMED'::...}): the shipped Flyway
     * migration and Liquibase changelog use the same.
     */
    static final String STATE_LIST = "'%state%= ANY%''CLAIMED''%''CONFIRMED''%'";

    /** The columns added to the table after its first version, in the order they came. */
    public static final List<String> ADDED_COLUMNS = List.of("lease_until", "attempts", "last_failure", "message_id",
            "fingerprint");

    /**
     * The table in its current version, from nothing or from any earlier version: every statement does nothing when
     * its part is already there (an earlier version's state check constraint, which has no such form, is dropped by
     * the store when it finds one: {@link TableChecks.StateChecks}). The same statements as the shipped Flyway
     * migrations and Liquibase changelog.
     */
    public static List<String> schema(String table) {
        String name = table.substring(table.indexOf('.') + 1);
        List<String> statements = new ArrayList<>();
        if (name.length() < table.length()) {
            statements.add("CREATE SCHEMA IF NOT EXISTS " + table.substring(0, table.indexOf('.')));
        }
        StringJoiner create = new StringJoiner(", ", "CREATE TABLE IF NOT EXISTS " + table + " (", ")");
        COLUMNS.forEach((column, definition) -> create.add(column + " " + definition));
        statements.add(create.toString());
        for (String column : ADDED_COLUMNS) {
            statements.add("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + column + " " + COLUMNS.get(column));
        }
        // The purge deletes by expiry: an index range scan, not a table scan.
        statements.add("CREATE INDEX IF NOT EXISTS " + name + "_expires_at ON " + table + " (expires_at)");
        // The age of the oldest live claim (a metric, and the Dev UI) reads only the claims.
        statements.add("CREATE INDEX IF NOT EXISTS " + name + "_claims ON " + table
                + " (recorded_at) WHERE state = 'CLAIMED'");
        return List.copyOf(statements);
    }

    /** @return the statement that drops the state column's check constraints ({@link TableChecks.StateChecks}) */
    public static String dropStateChecks(String table, List<String> constraints) {
        StringJoiner drops = new StringJoiner(", ", "ALTER TABLE " + table + " ", "");
        for (String constraint : constraints) {
            drops.add("DROP CONSTRAINT IF EXISTS " + (constraint.matches("[a-z_][a-z0-9_]*") ? constraint
                    : '"' + constraint.replace("\"", "\"\"") + '"'));
        }
        return drops.toString();
    }

    /** Whether the table can be read: fails when it is missing. */
    public static String check(String table) {
        return "SELECT 1 FROM " + table + " WHERE 1 = 0";
    }

    /**
     * The table's columns.
     * <p>
     * Parameters: 1 the table. Returns one row per column: its name.
     */
    public static String columnsOf() {
        return "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) AND attnum > 0 AND NOT attisdropped";
    }

    /**
     * The table's check constraints listing the states of its state column ({@code state IN (...)}, which PostgreSQL
     * shows as {@code = ANY (ARRAY[...])}): the extension's earlier versions' and Hibernate ORM's, not any other check
     * an operator may have added.
     * <p>
     * Parameters: 1 the table. Returns one row per constraint: its name and its definition.
     */
    public static String stateChecks() {
        return "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = to_regclass(?)"
                + " AND contype = 'c' AND pg_get_constraintdef(oid) LIKE " + STATE_LIST + " ORDER BY conname";
    }

    /**
     * The connection's {@code synchronous_commit}, where its value comes from ({@code pg_settings.source}: the
     * configuration file, the database, the user, the client...), the role and the database.
     */
    public static String commitSetting() {
        return "SELECT current_setting('synchronous_commit'), (SELECT source FROM pg_settings WHERE name ="
                + " 'synchronous_commit'), current_user, current_database()";
    }

    /**
     * Whether the table and its two indexes exist.
     * <p>
     * Parameters: 1 the table, 2 its expiry index, 3 its claims index (each named after the table, in its schema).
     * Returns one row of three booleans.
     */
    public static String present() {
        return "SELECT to_regclass(?) IS NOT NULL, to_regclass(?) IS NOT NULL, to_regclass(?) IS NOT NULL";
    }

    /**
     * Takes the lock that makes instances starting at once update the schema in turn, until the transaction ends.
     */
    public static String schemaLock() {
        return "SELECT pg_advisory_xact_lock(hashtextextended('quarkus-idempotency schema', 0))";
    }

    /**
     * Makes a schema update fail rather than stall everyone when the table is busy with long transactions.
     */
    public static String schemaLockTimeout() {
        return "SET LOCAL lock_timeout = '10s'";
    }

    /** Keys by state. Returns one row per state present: the state and its count. */
    public static String countByState(String table) {
        return "SELECT state, count(*) FROM " + table + " GROUP BY state";
    }

    /**
     * The oldest live claims first.
     * <p>
     * Parameters: 1 how many. Returns rows of {@link #RECORD_COLUMNS}.
     */
    public static String oldestClaims(String table) {
        return "SELECT " + RECORD_COLUMNS + " FROM " + table + " WHERE state = 'CLAIMED' ORDER BY recorded_at LIMIT ?";
    }

    /**
     * The most recently recorded keys first.
     * <p>
     * Parameters: 1 how many. Returns rows of {@link #RECORD_COLUMNS}.
     */
    public static String mostRecent(String table) {
        return "SELECT " + RECORD_COLUMNS + " FROM " + table + " ORDER BY recorded_at DESC LIMIT ?";
    }

    /** The columns of a record as {@link #oldestClaims} and {@link #mostRecent} return them, in order. */
    public static final String RECORD_COLUMNS = "scoped_key, scope, state, claimed_by, recorded_at, lease_until,"
            + " expires_at, attempts, last_failure";

    /** @return the key as the application made it, from the stored scoped key (scope, colon, key) */
    public static String unscoped(String scopedKey, String scope) {
        String prefix = StorageKeys.escape(scope) + ":"; // a scope's ':' and '\\' are escaped in the stored key
        return scopedKey.startsWith(prefix) ? scopedKey.substring(prefix.length()) : scopedKey;
    }
}
