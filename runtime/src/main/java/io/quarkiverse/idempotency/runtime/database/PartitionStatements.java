package io.quarkiverse.idempotency.runtime.database;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * The SQL of the time-partitioned key table: the table partitioned by {@code expires_at}, its partitions, and the
 * three functions that write keys into it.
 * <p>
 * PostgreSQL enforces a unique key across partitions only when the partition column is part of it, and
 * {@code (scoped_key, expires_at)} would not stop a second row of the same key. So the statements that insert keys are
 * functions: each takes the key's transaction-scoped advisory lock (the same lock as the unpartitioned table's
 * statements), and only then looks for the key in every partition, in a statement of its own, whose snapshot is taken
 * after the lock: whoever wrote the key before has committed (or rolled back) by then. Every writer of a key takes that
 * lock first, so a key has at most one row, whichever partition it is in. That argument needs each statement to see
 * what committed before it, which only READ COMMITTED gives: the functions refuse any other isolation.
 * <p>
 * The statements that only update a key's row by its key run unchanged on the partitioned table (an update that moves
 * {@code expires_at} into another partition moves the row).
 */
final class PartitionStatements {

    /** The suffix of a partition's name: its lower bound in UTC, {@code _p20261201_0600}. */
    static final DateTimeFormatter SUFFIX = DateTimeFormatter.ofPattern("'_p'yyyyMMdd'_'HHmmss").withZone(ZoneOffset.UTC);
    /** The longest table name that leaves room for a partition's suffix within PostgreSQL's 63 characters. */
    static final int LONGEST_NAME = 63 - 17;

    private static final String ISOLATION = "IF current_setting('transaction_isolation') <> 'read committed' THEN"
            + " RAISE EXCEPTION 'The partitioned idempotency table %s needs READ COMMITTED transactions, not %%',"
            + " current_setting('transaction_isolation') USING ERRCODE = 'feature_not_supported'; END IF;";
    private static final String LOCK = "pg_try_advisory_xact_lock(hashtextextended(p_key, 0))";
    private static final String MS = " * interval '1 millisecond'";

    private PartitionStatements() {
    }

    /**
     * @return the lease-mode claim: parameters the key, scope, token, lease, retention, message id, fingerprint and
     *         asynchronous commit
     */
    static String claim(String table) {
        return "SELECT * FROM " + table + "_claim(?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /**
     * @return lease-mode claims of several keys in one statement (the function once per key, in order, in one
     *         transaction): parameters the keys, scopes, tokens, leases, retentions, message ids and fingerprints
     *         (arrays of equal length) and asynchronous commit; one row per key, in order: its position, then the
     *         function's columns
     */
    static String claimBatch(String table) {
        return "SELECT u.n, c.* FROM " + RecordStatements.BATCH_INPUT + " CROSS JOIN LATERAL " + table
                + "_claim(u.scoped_key, u.scope, u.token, u.lease_ms, u.retention_ms, u.message_id, u.fingerprint, ?) c"
                + " ORDER BY u.n";
    }

    /**
     * @return the in-transaction claim: parameters the key, scope, token, retention, message id and fingerprint; true
     *         when inserted
     */
    static String claimInTransaction(String table) {
        return "SELECT " + table + "_claim_in_transaction(?, ?, ?, ?, ?, ?)";
    }

    /**
     * @return the count of a failed attempt whose transaction rolled back: parameters the key, scope, budget, token,
     *         retention and failure; the attempts counted, or null
     */
    static String recordFailureAfterRollback(String table) {
        return "SELECT " + table + "_record_failure(?, ?, ?, ?, ?, ?)";
    }

    /** The table, partitioned by expiry: its primary key must hold the partition column. */
    static String createTable(String table) {
        StringBuilder create = new StringBuilder("CREATE TABLE IF NOT EXISTS " + table + " (");
        TableStatements.COLUMNS.forEach((column, definition) -> create.append(column).append(' ')
                .append(definition.replace(" PRIMARY KEY", "")).append(", "));
        String name = nameOf(table);
        create.append("CONSTRAINT ").append(name).append("_pkey PRIMARY KEY (scoped_key, expires_at))")
                .append(" PARTITION BY RANGE (expires_at)");
        return create.toString();
    }

    /** The statements that create a partitioned table, or bring one up to date. */
    static List<String> schema(String table) {
        List<String> statements = new ArrayList<>();
        if (table.indexOf('.') > 0) {
            statements.add("CREATE SCHEMA IF NOT EXISTS " + table.substring(0, table.indexOf('.')));
        }
        statements.add(createTable(table));
        for (String column : TableStatements.ADDED_COLUMNS) {
            statements.add("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + column + " "
                    + TableStatements.COLUMNS.get(column));
        }
        // The age of the oldest live claim (a metric, and the Dev UI) reads only the claims.
        statements.add("CREATE INDEX IF NOT EXISTS " + nameOf(table) + "_claims ON " + table
                + " (recorded_at) WHERE state = 'CLAIMED'");
        statements.addAll(functions(table));
        return statements;
    }

    /** The functions that write keys (see the class comment), created or replaced. */
    static List<String> functions(String table) {
        String isolation = ISOLATION.formatted(table.replace("'", "''"));
        String leaseEnd = "coalesce(lease_until, recorded_at + interval '5 minutes')";
        String answer = "CASE v_state WHEN 'CONFIRMED' THEN 'DONE' WHEN 'DEAD_LETTERED' THEN 'DEAD_LETTERED'"
                + " ELSE 'BUSY' END";
        String leaseLeft = "CASE WHEN v_state = 'CLAIMED' THEN (extract(epoch FROM v_lease_end - now()) * 1000)::bigint"
                + " END";
        String read = "SELECT state, attempts, last_failure, " + leaseEnd + ", message_id, fingerprint,"
                + " (extract(epoch FROM now() - recorded_at) * 1000)::bigint INTO v_state, v_attempts, v_failure,"
                + " v_lease_end, v_message_id, v_fingerprint, v_age FROM " + table + " WHERE scoped_key = p_key;";
        String found = answer + ", v_attempts, " + leaseLeft + ", v_failure, v_message_id, v_fingerprint, v_age";
        String none = "NULL::bigint, NULL::varchar, NULL::varchar, NULL::varchar, NULL::bigint";
        String free = "(v_state = 'FAILED' OR (v_state = 'CLAIMED' AND v_lease_end < now()))";
        String async = "IF p_async THEN PERFORM set_config('synchronous_commit', 'off', true); END IF;";
        String claim = "CREATE OR REPLACE FUNCTION " + table + "_claim(p_key varchar, p_scope varchar,"
                + " p_token varchar, p_lease_ms bigint, p_retention_ms bigint, p_message_id varchar,"
                + " p_fingerprint varchar, p_async boolean)"
                + " RETURNS TABLE (answer text, failed integer, lease_left_ms bigint, failure varchar,"
                + " seen_message_id varchar, seen_fingerprint varchar, age_ms bigint)"
                + " LANGUAGE plpgsql VOLATILE AS $f$"
                + " DECLARE v_state varchar; v_attempts integer; v_failure varchar; v_lease_end timestamptz;"
                + " v_taken integer; v_message_id varchar; v_fingerprint varchar; v_age bigint;"
                + " BEGIN " + isolation
                // a duplicate only reads: no lock, no write
                + " " + read
                + " IF FOUND AND NOT " + free + " THEN"
                + " RETURN QUERY SELECT " + found + "; RETURN; END IF;"
                + " IF NOT " + LOCK + " THEN"
                + " RETURN QUERY SELECT 'BUSY'::text, coalesce(v_attempts, 0), " + none + "; RETURN;"
                + " END IF;"
                // under the lock, a statement of its own: what committed before is seen
                + " " + read
                + " IF NOT FOUND THEN " + async
                + " INSERT INTO " + table + " (scoped_key, scope, state, claimed_by, recorded_at, lease_until,"
                + " expires_at, attempts, message_id, fingerprint) VALUES (p_key, p_scope, 'CLAIMED', p_token, now(),"
                + " now() + p_lease_ms" + MS + ", now() + p_retention_ms" + MS + ", 0, p_message_id, p_fingerprint);"
                + " RETURN QUERY SELECT 'NEW'::text, 0, " + none + "; RETURN; END IF;"
                + " IF " + free + " THEN " + async
                + " UPDATE " + table + " SET state = 'CLAIMED', claimed_by = p_token, recorded_at = now(),"
                + " lease_until = now() + p_lease_ms" + MS + ", expires_at = now() + p_retention_ms" + MS
                + ", message_id = p_message_id, fingerprint = p_fingerprint"
                + " WHERE scoped_key = p_key AND (state = 'FAILED' OR (state = 'CLAIMED' AND " + leaseEnd
                + " < now())) RETURNING attempts INTO v_taken;"
                + " IF v_taken IS NOT NULL THEN RETURN QUERY SELECT CASE WHEN v_state = 'CLAIMED' THEN 'TAKEN_OVER'"
                + " ELSE 'NEW' END, v_taken, " + none + "; RETURN; END IF;"
                + " " + read + " END IF;"
                + " RETURN QUERY SELECT " + found + ";"
                + " END $f$";
        String claimInTransaction = "CREATE OR REPLACE FUNCTION " + table + "_claim_in_transaction(p_key varchar,"
                + " p_scope varchar, p_token varchar, p_retention_ms bigint, p_message_id varchar,"
                + " p_fingerprint varchar) RETURNS boolean"
                + " LANGUAGE plpgsql VOLATILE AS $f$ BEGIN " + isolation
                + " IF NOT " + LOCK + " THEN RETURN false; END IF;"
                + " IF EXISTS (SELECT 1 FROM " + table + " WHERE scoped_key = p_key) THEN RETURN false; END IF;"
                + " INSERT INTO " + table + " (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts, message_id, fingerprint) VALUES (p_key, p_scope, 'CONFIRMED', p_token, now(),"
                + " now() + p_retention_ms" + MS + ", 0, p_message_id, p_fingerprint); RETURN true; END $f$";
        String recordFailure = "CREATE OR REPLACE FUNCTION " + table + "_record_failure(p_key varchar,"
                + " p_scope varchar, p_budget integer, p_token varchar, p_retention_ms bigint, p_failure varchar)"
                + " RETURNS integer LANGUAGE plpgsql VOLATILE AS $f$ DECLARE v_attempts integer; BEGIN " + isolation
                + " IF NOT " + LOCK + " THEN RETURN NULL; END IF;"
                + " IF NOT EXISTS (SELECT 1 FROM " + table + " WHERE scoped_key = p_key) THEN"
                + " INSERT INTO " + table + " (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts, last_failure) VALUES (p_key, p_scope, CASE WHEN 1 >= p_budget THEN 'DEAD_LETTERED'"
                + " ELSE 'FAILED' END, p_token, now(), now() + p_retention_ms" + MS + ", 1, p_failure);"
                + " RETURN 1; END IF;"
                + " UPDATE " + table + " SET attempts = attempts + 1, state = CASE WHEN attempts + 1 >= p_budget"
                + " THEN 'DEAD_LETTERED' ELSE 'FAILED' END, claimed_by = p_token, last_failure = p_failure,"
                + " lease_until = NULL, recorded_at = now(), expires_at = greatest(expires_at, now() + p_retention_ms"
                + MS + ") WHERE scoped_key = p_key AND state = 'FAILED' RETURNING attempts INTO v_attempts;"
                + " RETURN v_attempts; END $f$";
        // The functions of version 1 took fewer parameters: they stay beside these (overloads), so that instances of
        // the earlier version keep claiming keys during a rolling upgrade (without the message facts a later duplicate is compared with).
        List<String> statements = new java.util.ArrayList<>();
        // CREATE OR REPLACE cannot change the columns a function returns: a claim function of this signature from an
        // earlier build is dropped first (in the same transaction, so no session sees it missing)
        statements.add("DROP FUNCTION IF EXISTS " + functionNames(table).get(0));
        statements.addAll(List.of(claim, claimInTransaction, recordFailure));
        for (String function : functionNames(table)) {
            statements.add("COMMENT ON FUNCTION " + function + " IS '" + FUNCTIONS_VERSION + "'");
        }
        return statements;
    }

    /**
     * The version of the functions, in their comments: a later version whose functions differ raises it, and the
     * store replaces older ones at startup.
     */
    static final String FUNCTIONS_VERSION = "quarkus-idempotency functions 2";

    /** The functions, by their signatures, as {@code to_regprocedure} and {@code COMMENT ON FUNCTION} take them. */
    static List<String> functionNames(String table) {
        return List.of(table + "_claim(varchar, varchar, varchar, bigint, bigint, varchar, varchar, boolean)",
                table + "_claim_in_transaction(varchar, varchar, varchar, bigint, varchar, varchar)",
                table + "_record_failure(varchar, varchar, integer, varchar, bigint, varchar)");
    }

    /**
     * The partitions of the table, each with its bounds in microseconds since the epoch, exactly as PostgreSQL keeps
     * them (a bound of {@code MINVALUE} or {@code MAXVALUE} is null): a partition made after one whose bound is not a
     * whole millisecond (the old table's, after a move) starts exactly where it ends, neither overlapping it nor leaving
     * a gap; whether a concurrent detach of it is pending, and its estimated row count (-1
     * before it was first analysed).
     * <p>
     * Parameters: 1 the table.
     */
    static String partitions() {
        return "SELECT format('%I.%I', n.nspname, c.relname), (extract(epoch FROM (regexp_match(pg_get_expr("
                + "c.relpartbound, c.oid), 'FROM \\(''([^'']*)''\\)'))[1]::timestamptz) * 1000000)::bigint,"
                + " (extract(epoch FROM (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']*)''\\)'))[1]"
                + "::timestamptz) * 1000000)::bigint, i.inhdetachpending, c.reltuples::bigint"
                + " FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE i.inhparent = to_regclass(?)";
    }

    /**
     * Tables detached from the table but not dropped (the purge stopped in between): they carry the comment
     * {@link #comment}.
     * <p>
     * Parameters: 1 the comment.
     */
    static String orphans() {
        return "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE c.relkind = 'r' AND obj_description(c.oid, 'pg_class') = ? AND NOT c.relispartition";
    }

    /** @return the comment on each partition, naming its table */
    static String comment(String table) {
        return "quarkus-idempotency partition of " + table;
    }

    /** @return the name of a partition starting at a bound, in the table's schema */
    static String partitionName(String table, Instant from) {
        return table + SUFFIX.format(from);
    }

    /**
     * A partition, created apart and then attached: creating it as {@code PARTITION OF} would take an exclusive lock
     * on the table, attaching takes one that lets every claim go on.
     */
    static List<String> createPartition(String table, Instant from, Instant to) {
        String partition = partitionName(table, from);
        return List.of("CREATE TABLE IF NOT EXISTS " + partition + " (LIKE " + table
                + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)",
                "COMMENT ON TABLE " + partition + " IS '" + comment(table).replace("'", "''") + "'",
                "ALTER TABLE " + table + " ATTACH PARTITION " + partition + " FOR VALUES FROM ('" + from + "') TO ('"
                        + to + "')");
    }

    /** Detaches a partition without blocking the table's readers and writers (outside a transaction). */
    static String detach(String table, String partition) {
        return "ALTER TABLE " + table + " DETACH PARTITION " + partition + " CONCURRENTLY";
    }

    /** Completes a concurrent detach that was interrupted. */
    static String finalizeDetach(String table, String partition) {
        return "ALTER TABLE " + table + " DETACH PARTITION " + partition + " FINALIZE";
    }

    static String drop(String partition) {
        return "DROP TABLE IF EXISTS " + partition;
    }

    /** Serialises the creation of partitions across instances, until the transaction ends. */
    static String creationLock(String table) {
        return "SELECT pg_advisory_xact_lock(hashtextextended('quarkus-idempotency partitions " + table.replace("'", "''")
                + "', 0))";
    }

    /** One instance drops partitions at a time: a session lock, since a concurrent detach runs outside transactions. */
    static String dropLock(String table) {
        return "SELECT pg_try_advisory_lock(hashtextextended('quarkus-idempotency partition drop " + table.replace("'",
                "''") + "', 0))";
    }

    static String dropUnlock(String table) {
        return "SELECT pg_advisory_unlock(hashtextextended('quarkus-idempotency partition drop " + table.replace("'",
                "''") + "', 0))";
    }

    /**
     * Tries the session lock one instance moving the table to partitions holds, named after the table's oid (however
     * its name is written). Parameters: 1 the table. One row: whether it was taken.
     */
    static String moveLock() {
        return "SELECT pg_try_advisory_lock(hashtextextended('quarkus-idempotency move ' || to_regclass(?)::oid::text, 0))";
    }

    /** Whether the table is partitioned. Parameters: 1 the table. One row: true, false, or null when it is missing. */
    static String layout() {
        return "SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(?)";
    }

    /** The database's clock, in milliseconds since the epoch: what the partitions' bounds are compared with. */
    static String now() {
        return "SELECT floor(extract(epoch FROM now()) * 1000)::bigint";
    }

    /** The server's major version, and the isolation new transactions get. */
    static String server() {
        return "SELECT current_setting('server_version_num')::int / 10000, current_setting('default_transaction_isolation')";
    }

    /** Whether each function exists in this version. Parameters: 1 to 3 the functions' names. */
    static String functionsPresent() {
        return "SELECT count(*) = 3 FROM unnest(ARRAY[?, ?, ?]) f(name)"
                + " WHERE obj_description(to_regprocedure(f.name), 'pg_proc') = '" + FUNCTIONS_VERSION + "'";
    }

    /** @return the table's name without its schema */
    static String nameOf(String table) {
        return table.substring(table.indexOf('.') + 1);
    }
}
