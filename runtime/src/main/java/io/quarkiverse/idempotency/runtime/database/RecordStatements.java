package io.quarkiverse.idempotency.runtime.database;

/**
 * The statements of the key protocol, for one table: {@link KeyProtocol} runs and decodes them, whichever way it
 * reaches the database. Those that create, check and read the table are {@link TableStatements}.
 * <p>
 * A record's states are {@code CLAIMED} (held on a lease until {@code lease_until}), {@code CONFIRMED},
 * {@code FAILED} (the last attempt failed: free to claim, {@code attempts} counts the failures) and
 * {@code DEAD_LETTERED} (the budget was spent: free to claim with a fresh budget). Durations are bound in
 * milliseconds; timestamps are the database's, so instances with skewed clocks agree.
 * <p>
 * A delivery that writes its key inside its handler's transaction holds a transaction-scoped advisory lock on the key
 * (taken in the same statement as the insert) until that transaction ends. Every statement that could otherwise wait
 * on such an uncommitted row tries that lock first and answers "busy" when it is taken, so no delivery ever waits
 * for another one's transaction. The lock is {@code pg_try_advisory_xact_lock(hashtextextended(scoped_key, 0))}:
 * transaction-scoped, so it works behind PgBouncer's transaction pooling, and released by a commit, a rollback or a
 * dropped connection alike.
 * <p>
 * Records written before leases existed have no {@code lease_until}: they are honoured for five minutes after their
 * last renewal, the claim timeout of those versions, so that a rolling upgrade never takes over a live claim.
 */
public final class RecordStatements {

    /** A lease-mode claim's end: its lease, or for a record of an older version its renewal plus the old timeout. */
    private static final String LEASE_END = leaseEnd("");
    private static final String MS = " * interval '1 millisecond'";
    private static final String LOCK = "pg_try_advisory_xact_lock(hashtextextended(?, 0))";
    /** What a claim that took nothing answers, from the record it found (columns of the claim's {@code existing}). */
    private static final String ANSWER = "CASE state WHEN 'CONFIRMED' THEN 'DONE' WHEN 'DEAD_LETTERED' THEN"
            + " 'DEAD_LETTERED' ELSE 'BUSY' END";
    /** The milliseconds left on a claim's lease, from a record with a {@code lease_end} column; null for others. */
    private static final String LEASE_LEFT = "CASE WHEN state = 'CLAIMED' THEN (extract(epoch FROM lease_end - now())"
            + " * 1000)::bigint END";
    /** The milliseconds since a record was last written (for a confirmed key: since it was confirmed). */
    private static final String AGE = age("");
    /** What a claim answers about the key it found, besides the answer: see {@link #claim}. */
    private static final String FOUND = "attempts, " + LEASE_LEFT + ", last_failure, message_id, fingerprint, " + AGE;

    /** Makes the current transaction commit without waiting for its WAL flush (PostgreSQL's asynchronous commit). */
    public static final String ASYNCHRONOUS_COMMIT = "SELECT set_config('synchronous_commit', 'off', true)";
    /**
     * Writes one WAL record in the current transaction (a transactional logical decoding message, prefix
     * {@code quarkus-idempotency}, empty) and gives it a synchronous commit (the connection's own setting, or {@code on}
     * where that is {@code off}): its commit returns once the WAL is flushed up to its own record, so past every commit
     * before it, and, with a synchronous standby, once the standby has it too. A transaction that wrote no WAL (one that
     * only took a transaction id) would commit without any flush: PostgreSQL flushes only for transactions that wrote.
     */
    public static final String FLUSH = "SELECT set_config('synchronous_commit', CASE current_setting('synchronous_commit')"
            + " WHEN 'off' THEN 'on' ELSE current_setting('synchronous_commit') END, true),"
            + " pg_logical_emit_message(true, 'quarkus-idempotency', '')";

    /**
     * {@link #FLUSH}, and which of the given keys are confirmed, as the statement's snapshot sees them: each such row was
     * committed before the flush's record was written, so is durable once the flush's commit returns.
     * <p>
     * Parameters: 1 the scoped keys ({@code text[]}). Returns one row: the flush's two columns, then the confirmed keys
     * among those asked ({@code text[]}).
     */
    public static String flushConfirming(String table) {
        return FLUSH + ", ARRAY(SELECT k FROM unnest(?::text[]) k WHERE EXISTS (SELECT 1 FROM " + table
                + " r WHERE r.scoped_key = k AND r.state = 'CONFIRMED'))";
    }

    final String claim;
    final String claimBatch;
    final String confirmBatch;
    final String claimInTransaction;
    final String claimInTransactionAsynchronously;
    final String lookInTransaction;
    final String takeOverInTransaction;
    final String confirm;
    final String recordFailureOfClaim;
    final String recordFailureAfterRollback;
    final String release;
    final String renew;
    final String releaseDeadLetter;
    final String endLeasesOfEarlierStarts;
    final String purge;
    final String oldestClaim;
    final String state;
    final String peek;
    final String flushConfirming;

    RecordStatements(String table, boolean asynchronousClaimCommit) {
        this.claim = claim(table, asynchronousClaimCommit);
        this.claimBatch = claimBatch(table, asynchronousClaimCommit);
        this.confirmBatch = confirmBatch(table);
        this.claimInTransaction = claimInTransaction(table);
        this.claimInTransactionAsynchronously = claimInTransaction(table, true);
        this.lookInTransaction = lookInTransaction(table);
        this.takeOverInTransaction = takeOverInTransaction(table);
        this.confirm = confirm(table);
        this.recordFailureOfClaim = recordFailureOfClaim(table);
        this.recordFailureAfterRollback = recordFailureAfterRollback(table);
        this.release = release(table);
        this.renew = renew(table);
        this.releaseDeadLetter = releaseDeadLetter(table);
        this.endLeasesOfEarlierStarts = endLeasesOfEarlierStarts(table);
        this.purge = purge(table);
        this.oldestClaim = oldestClaim(table);
        this.state = state(table);
        this.peek = peek(table);
        this.flushConfirming = flushConfirming(table);
    }

    // The milliseconds since a record was last written, for a table alias ("" or "r.").
    private static String age(String alias) {
        return "(extract(epoch FROM now() - " + alias + "recorded_at) * 1000)::bigint";
    }

    // A claim's lease end, for a table alias ("" or "r.").
    private static String leaseEnd(String alias) {
        return "coalesce(" + alias + "lease_until, " + alias + "recorded_at + interval '5 minutes')";
    }

    /**
     * The lease-mode claim, committed on its own: one statement. {@code existing} reads the key's record; when there is
     * none, or it is free (failed, dead-lettered, or a claim whose lease ran out), the INSERT inserts the claim or (ON
     * CONFLICT) takes the record over, re-checking under the row lock. A duplicate only reads: no row lock, no WAL.
     * When a concurrent transaction inserted the key after this statement's snapshot, or holds the key's advisory lock
     * (an in-transaction delivery), nothing is returned and the caller reads {@link #state} in a new statement.
     * <p>
     * With {@code asynchronousCommit}, the row the INSERT writes comes from a one-row CTE that sets
     * {@code synchronous_commit} off for this statement's transaction only: whenever it writes, its commit does not
     * wait for the WAL flush. Still one round trip; nothing leaks to the pooled connection.
     * <p>
     * Parameters: 1 and 2 the scoped key, 3 the scope, 4 the token, 5 the lease, 6 the retention, 7 the message id, 8 the
     * payload's fingerprint, 9 the scoped key (the lock). Returns at most one row: the outcome ({@code NEW},
     * {@code TAKEN_OVER}, {@code DONE}, {@code BUSY} or {@code DEAD_LETTERED}), the failed attempts so far, for
     * {@code BUSY} the milliseconds left on the holder's lease, for {@code DEAD_LETTERED} the last failure, and for a key
     * it did not take the message id and fingerprint kept with it and the milliseconds since it was last written. A
     * dead-lettered key stays so: only
     * {@link #releaseDeadLetter} frees it.
     */
    public static String claim(String table, boolean asynchronousCommit) {
        return "WITH " + (asynchronousCommit
                ? "commit_mode AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)), "
                : "")
                + "existing AS (SELECT state, " + LEASE_END + " AS lease_end, attempts, last_failure, message_id,"
                + " fingerprint, recorded_at FROM " + table + " WHERE scoped_key = ?),"
                + " claimed AS (INSERT INTO " + table + " AS r (scoped_key, scope, state, claimed_by, recorded_at,"
                + " lease_until, expires_at, attempts, message_id, fingerprint) SELECT ?, ?, 'CLAIMED', ?, now(),"
                + " now() + ?" + MS + ", now() + ?" + MS + ", 0, ?, ?"
                + (asynchronousCommit ? " FROM commit_mode" : "")
                + " WHERE NOT EXISTS (SELECT 1 FROM existing WHERE state IN ('CONFIRMED', 'DEAD_LETTERED')"
                + " OR (state = 'CLAIMED' AND lease_end >= now())) AND " + LOCK
                + " ON CONFLICT (scoped_key) DO UPDATE SET state = 'CLAIMED', claimed_by = excluded.claimed_by,"
                + " recorded_at = excluded.recorded_at, lease_until = excluded.lease_until,"
                + " expires_at = excluded.expires_at, message_id = excluded.message_id,"
                + " fingerprint = excluded.fingerprint"
                + " WHERE r.state = 'FAILED' OR (r.state = 'CLAIMED' AND " + leaseEnd("r.") + " < now())"
                + " RETURNING xmax = 0 AS inserted, attempts)"
                + " SELECT CASE WHEN c.inserted THEN 'NEW' WHEN e.state = 'CLAIMED' THEN 'TAKEN_OVER' ELSE 'NEW' END,"
                + " c.attempts, NULL::bigint, NULL, NULL, NULL, NULL::bigint FROM claimed c LEFT JOIN existing e ON true"
                + " UNION ALL SELECT " + ANSWER + ", " + FOUND + " FROM existing WHERE NOT EXISTS (SELECT 1 FROM claimed)";
    }

    /**
     * Lease-mode claims of several keys in one statement, committed together: {@link #claim} for each, the keys given
     * as arrays (distinct keys, sorted, so that two batches take row locks in one order). Each key is inserted, taken
     * over or left alone exactly as {@link #claim} would; each answer is returned on the row of its key's position.
     * <p>
     * Parameters: 1 the scoped keys, 2 their scopes, 3 their tokens, 4 their leases, 5 their retentions, 6 their message
     * ids, 7 their fingerprints (arrays of equal length). Returns one row per key, in order: its position (from 1), then
     * {@link #claim}'s columns; the outcome is
     * null when the key was written after this statement's snapshot, or is held (the caller reads {@link #state}).
     */
    /** The rows of a batch of claims, from its seven array parameters, numbered from 1. */
    static final String BATCH_INPUT = "unnest(?::varchar[], ?::varchar[], ?::varchar[], ?::bigint[], ?::bigint[],"
            + " ?::varchar[], ?::varchar[]) WITH ORDINALITY AS u(scoped_key, scope, token, lease_ms, retention_ms,"
            + " message_id, fingerprint, n)";

    public static String claimBatch(String table, boolean asynchronousCommit) {
        return "WITH " + (asynchronousCommit
                ? "commit_mode AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)), "
                : "")
                + "input AS (SELECT * FROM " + BATCH_INPUT + "),"
                + " existing AS (SELECT i.n, r.state, " + leaseEnd("r.") + " AS lease_end, r.attempts, r.last_failure,"
                + " r.message_id, r.fingerprint, r.recorded_at FROM input i JOIN " + table
                + " r ON r.scoped_key = i.scoped_key),"
                + " claimed AS (INSERT INTO " + table + " AS r (scoped_key, scope, state, claimed_by, recorded_at,"
                + " lease_until, expires_at, attempts, message_id, fingerprint) SELECT i.scoped_key, i.scope, 'CLAIMED',"
                + " i.token, now(), now() + i.lease_ms" + MS + ", now() + i.retention_ms" + MS
                + ", 0, i.message_id, i.fingerprint FROM input i"
                + (asynchronousCommit ? ", commit_mode" : "")
                + " WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.n = i.n AND (e.state IN ('CONFIRMED',"
                + " 'DEAD_LETTERED') OR (e.state = 'CLAIMED' AND e.lease_end >= now())))"
                + " AND pg_try_advisory_xact_lock(hashtextextended(i.scoped_key, 0)) ORDER BY i.n"
                + " ON CONFLICT (scoped_key) DO UPDATE SET state = 'CLAIMED', claimed_by = excluded.claimed_by,"
                + " recorded_at = excluded.recorded_at, lease_until = excluded.lease_until,"
                + " expires_at = excluded.expires_at, message_id = excluded.message_id,"
                + " fingerprint = excluded.fingerprint"
                + " WHERE r.state = 'FAILED' OR (r.state = 'CLAIMED' AND " + leaseEnd("r.") + " < now())"
                + " RETURNING r.scoped_key, xmax = 0 AS inserted, attempts)"
                + " SELECT i.n, CASE WHEN c.inserted THEN 'NEW' WHEN c.scoped_key IS NOT NULL AND e.state = 'CLAIMED'"
                + " THEN 'TAKEN_OVER' WHEN c.scoped_key IS NOT NULL THEN 'NEW' WHEN e.n IS NOT NULL THEN"
                + " CASE e.state WHEN 'CONFIRMED' THEN 'DONE' WHEN 'DEAD_LETTERED' THEN 'DEAD_LETTERED' ELSE 'BUSY' END"
                + " END, coalesce(c.attempts, e.attempts),"
                + " CASE WHEN c.scoped_key IS NULL AND e.state = 'CLAIMED' THEN"
                + " (extract(epoch FROM e.lease_end - now()) * 1000)::bigint END,"
                + " CASE WHEN c.scoped_key IS NULL THEN e.last_failure END,"
                + " CASE WHEN c.scoped_key IS NULL THEN e.message_id END,"
                + " CASE WHEN c.scoped_key IS NULL THEN e.fingerprint END,"
                + " CASE WHEN c.scoped_key IS NULL THEN " + age("e.") + " END"
                + " FROM input i LEFT JOIN claimed c ON c.scoped_key = i.scoped_key LEFT JOIN existing e ON e.n = i.n"
                + " ORDER BY i.n";
    }

    /**
     * Confirms several lease-mode claims in one statement, committed together, each fenced by its token as in
     * {@link #confirm}.
     * <p>
     * Parameters: 1 the scoped keys, 2 their tokens, 3 their retentions (arrays of equal length). Returns the scoped key
     * and token of each claim confirmed; a claim missing from them was no longer its token's (a key asked twice in one
     * batch, by a stale claim and by the one that took it over, is confirmed for the latter only).
     */
    public static String confirmBatch(String table) {
        return "UPDATE " + table + " AS r SET state = 'CONFIRMED', recorded_at = now(), lease_until = NULL,"
                + " expires_at = now() + u.retention_ms" + MS
                + " FROM unnest(?::varchar[], ?::varchar[], ?::bigint[]) AS u(scoped_key, token, retention_ms)"
                + " WHERE r.scoped_key = u.scoped_key AND r.state = 'CLAIMED' AND r.claimed_by = u.token"
                + " RETURNING r.scoped_key, u.token";
    }

    /**
     * The in-transaction claim, the common case of the default mode: a plain insert of the key as confirmed, inside the
     * handler's transaction, guarded by the key's advisory lock so that a concurrent delivery of the key never waits
     * on this uncommitted row. One row inserted: a new key. None: the key exists or is held; the caller then runs
     * {@link #lookInTransaction}.
     * <p>
     * Parameters: 1 the scoped key, 2 the scope, 3 the token, 4 the retention, 5 the message id, 6 the fingerprint, 7 the
     * scoped key (the lock).
     */
    public static String claimInTransaction(String table) {
        return claimInTransaction(table, false);
    }

    /**
     * {@link #claimInTransaction(String)}, and, with {@code asynchronousCommit}, in the same statement, the transaction
     * set to commit without waiting for its WAL flush ({@link #ASYNCHRONOUS_COMMIT}) when the key is inserted.
     */
    public static String claimInTransaction(String table, boolean asynchronousCommit) {
        return "INSERT INTO " + table + " (scoped_key, scope, state, claimed_by, recorded_at, expires_at, attempts,"
                + " message_id, fingerprint) SELECT ?, ?, 'CONFIRMED', ?, now(), now() + ?" + MS + ", 0, ?, ? WHERE "
                + LOCK
                + (asynchronousCommit ? " AND set_config('synchronous_commit', 'off', true) = 'off'" : "")
                + " ON CONFLICT (scoped_key) DO NOTHING";
    }

    /**
     * The second look of an in-transaction claim that inserted nothing: whether this transaction holds the key's
     * advisory lock now (taken here if the holder has ended since), and the key's record.
     * <p>
     * Parameters: 1 the scoped key (the lock), 2 the scoped key. Returns one row: locked, state (null when there is no
     * record), failed attempts, whether a claim's lease ran out, the last failure, the message id and fingerprint kept with the
     * key,
     * the milliseconds since it was last written.
     */
    public static String lookInTransaction(String table) {
        return "SELECT " + LOCK + ", r.state, r.attempts, " + leaseEnd("r.") + " < now(), r.last_failure, r.message_id,"
                + " r.fingerprint, " + age("r.") + " FROM (SELECT 1) one LEFT JOIN " + table + " r ON r.scoped_key = ?";
    }

    /**
     * Takes a failed key over inside the handler's transaction (the caller holds the key's advisory lock): the retry
     * becomes this delivery's confirmed key, visible if the transaction commits. (A claim whose lease ran out is taken
     * over on a lease instead, so that the lost attempt is counted whatever the transaction does.)
     * <p>
     * Parameters: 1 the token, 2 the retention, 3 the message id, 4 the fingerprint, 5 the scoped key. Returns the failed
     * attempts so far, or no row when
     * the record is not a failed one.
     */
    public static String takeOverInTransaction(String table) {
        return "UPDATE " + table + " SET state = 'CONFIRMED', claimed_by = ?, recorded_at = now(), lease_until = NULL,"
                + " expires_at = now() + ?" + MS + ", message_id = ?, fingerprint = ? WHERE scoped_key = ?"
                + " AND state = 'FAILED' RETURNING attempts";
    }

    /**
     * Releases a dead-lettered key for a replay: it becomes a failed key with a fresh budget.
     * <p>
     * Parameters: 1 the scoped key. One row updated, or none when the key is not dead-lettered.
     */
    /**
     * Ends the leases of the claims of an instance's earlier starts (see
     * {@link io.quarkiverse.idempotency.IdempotencyStore#endLeasesOfEarlierStarts}): they run out now, so that each
     * is taken over by the next delivery of its key.
     * <p>
     * Parameters: 1 the start of every token of the instance, 2 the start of the tokens of its current start. Returns
     * the count of claims updated.
     */
    public static String endLeasesOfEarlierStarts(String table) {
        return "UPDATE " + table + " SET lease_until = now() - interval '1 millisecond' WHERE state = 'CLAIMED'"
                + " AND starts_with(claimed_by, ?) AND NOT starts_with(claimed_by, ?)";
    }

    public static String releaseDeadLetter(String table) {
        return "UPDATE " + table + " SET state = 'FAILED', attempts = 0, lease_until = NULL, recorded_at = now()"
                + " WHERE scoped_key = ? AND state = 'DEAD_LETTERED'";
    }

    /**
     * Confirms a lease-mode claim, fenced by its token.
     * <p>
     * Parameters: 1 the retention, 2 the scoped key, 3 the token. One row updated, or none when the claim is no longer
     * this token's.
     */
    public static String confirm(String table) {
        return "UPDATE " + table + " SET state = 'CONFIRMED', recorded_at = now(), lease_until = NULL,"
                + " expires_at = now() + ?" + MS + " WHERE scoped_key = ? AND state = 'CLAIMED' AND claimed_by = ?";
    }

    /**
     * Counts a failed attempt on the lease-mode claim this token holds, releasing it; marks the record dead-lettered
     * when the count reaches the budget.
     * <p>
     * Parameters: 1 the budget, 2 the failure, 3 the retention, 4 the scoped key, 5 the token. Returns the failed
     * attempts counted, or no row.
     */
    public static String recordFailureOfClaim(String table) {
        return "UPDATE " + table + " SET state = CASE WHEN attempts + 1 >= ? THEN 'DEAD_LETTERED' ELSE 'FAILED' END,"
                + " attempts = attempts + 1, last_failure = ?, lease_until = NULL, recorded_at = now(),"
                + " expires_at = greatest(expires_at, now() + ?" + MS + ")"
                + " WHERE scoped_key = ? AND state = 'CLAIMED' AND claimed_by = ? RETURNING attempts";
    }

    /**
     * Counts a failed attempt whose key was written in a transaction that rolled back, so left no record: a record of
     * its own, or one more on the key's failed record (a retry); guarded by the key's advisory lock, so that it never waits on
     * (nor counts against) a delivery holding the key right now.
     * <p>
     * Parameters: 1 the scoped key, 2 the scope, 3 the budget, 4 the token, 5 the retention, 6 the failure, 7 the
     * scoped key (the lock), 8 the budget. Returns the failed attempts counted, or no row.
     */
    public static String recordFailureAfterRollback(String table) {
        return "INSERT INTO " + table + " AS r (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts, last_failure) SELECT ?, ?, CASE WHEN 1 >= ? THEN 'DEAD_LETTERED' ELSE 'FAILED' END, ?,"
                + " now(), now() + ?" + MS + ", 1, ? WHERE " + LOCK
                + " ON CONFLICT (scoped_key) DO UPDATE SET attempts = r.attempts + 1,"
                + " state = CASE WHEN r.attempts + 1 >= ? THEN 'DEAD_LETTERED' ELSE 'FAILED' END,"
                + " claimed_by = excluded.claimed_by, last_failure = excluded.last_failure, lease_until = NULL,"
                + " recorded_at = now(), expires_at = greatest(r.expires_at, excluded.expires_at)"
                + " WHERE r.state = 'FAILED' RETURNING attempts";
    }

    /**
     * Gives up a lease-mode claim without counting an attempt: a claim of a key that never failed is deleted; a retry's
     * claim goes back to failed, keeping its count.
     * <p>
     * Parameters: 1 the scoped key, 2 the token, 3 the scoped key, 4 the token. Returns the number of records released.
     */
    public static String release(String table) {
        return "WITH deleted AS (DELETE FROM " + table + " WHERE scoped_key = ? AND state = 'CLAIMED'"
                + " AND claimed_by = ? AND attempts = 0 RETURNING 1),"
                + " failed AS (UPDATE " + table + " SET state = 'FAILED', lease_until = NULL, recorded_at = now()"
                + " WHERE scoped_key = ? AND state = 'CLAIMED' AND claimed_by = ? AND attempts > 0 RETURNING 1)"
                + " SELECT (SELECT count(*) FROM deleted) + (SELECT count(*) FROM failed)";
    }

    /**
     * Extends the leases of running handlers' claims, each fenced by its token. {@code recorded_at} moves too, which is
     * what versions before leases read. A claim whose record another transaction holds right now (its confirm, about to
     * commit) is skipped rather than waited for: one busy row never stalls the renewal of the others.
     * <p>
     * Parameters: 1 the scoped keys, 2 their tokens, 3 their leases (arrays of equal length).
     */
    public static String renew(String table) {
        return "UPDATE " + table + " AS r SET lease_until = now() + held.lease_ms" + MS + ", recorded_at = now()"
                + " FROM (SELECT s.scoped_key, u.lease_ms FROM unnest(?::varchar[], ?::varchar[], ?::bigint[])"
                + " AS u(scoped_key, token, lease_ms) JOIN " + table + " s ON s.scoped_key = u.scoped_key"
                + " AND s.state = 'CLAIMED' AND s.claimed_by = u.token FOR UPDATE OF s SKIP LOCKED) held"
                + " WHERE r.scoped_key = held.scoped_key";
    }

    /**
     * Deletes up to a number of expired keys, in any state, oldest expiry first. {@code SKIP LOCKED}: instances purging
     * at once take different rows instead of waiting for each other.
     * <p>
     * Parameters: 1 the most rows to delete. Returns the number of rows deleted.
     */
    public static String purge(String table) {
        return "DELETE FROM " + table + " WHERE scoped_key IN (SELECT scoped_key FROM " + table
                + " WHERE expires_at < now() ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)";
    }

    /**
     * The age of the oldest live claim, in seconds (null when there is none), read from the claims index.
     */
    public static String oldestClaim(String table) {
        return "SELECT extract(epoch FROM now() - min(recorded_at))::float8 FROM " + table + " WHERE state = 'CLAIMED'";
    }

    /**
     * A key's state, looked at again by a lease-mode claim that found the key taken after its snapshot.
     * <p>
     * Parameters: 1 the scoped key. Returns no row, or the answer as {@link #claim} gives it for a key it did not take:
     * {@code DONE}, {@code DEAD_LETTERED} or {@code BUSY}, and the rest of its columns.
     */
    public static String state(String table) {
        return "SELECT " + ANSWER + ", " + FOUND + " FROM (SELECT state, " + LEASE_END + " AS lease_end, attempts,"
                + " last_failure, message_id, fingerprint, recorded_at FROM " + table + " WHERE scoped_key = ?) existing";
    }

    /**
     * A key's record, looked up without claiming it (the other form of a key while the key storage changes), as a
     * claim would see it: a key whose lock another transaction holds (a delivery writing it in its transaction, not
     * committed yet) is {@code LOCKED}, busy, as the claim would answer.
     * <p>
     * Parameters: 1 the scoped key. Returns one row: the state ({@code LOCKED}, or {@code NULL} when there is no record),
     * the failed attempts, whether a claim's lease still runs, the last failure, the message id and fingerprint kept, the
     * milliseconds since it was last written.
     */
    public static String peek(String table) {
        return "SELECT CASE WHEN NOT pg_try_advisory_xact_lock(hashtextextended(k.id, 0)) THEN 'LOCKED' ELSE state END,"
                + " coalesce(attempts, 0), " + LEASE_END + " >= now(), last_failure, message_id, fingerprint, " + AGE
                + " FROM (SELECT CAST(? AS varchar) AS id) k LEFT JOIN " + table + " ON scoped_key = k.id";
    }

    /** How much of a failure the {@code last_failure} column keeps. */
    static final int FAILURE_LENGTH = 1000;

    /** @return a failure as the {@code last_failure} column keeps it: its first {@value #FAILURE_LENGTH} characters */
    static String reason(String failure) {
        return failure == null || failure.length() <= FAILURE_LENGTH ? failure : failure.substring(0, FAILURE_LENGTH);
    }
}
