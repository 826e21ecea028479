package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;

/**
 * Moves an unpartitioned key table to partitions while consumers run. The table becomes the first partition, of every
 * expiry up to a bound past its last key's (so its keys are honoured until they expire, and it is dropped whole once
 * they all have); the partitioned table takes its name, and new partitions follow from the bound.
 * <p>
 * The long steps (an index on the key and expiry, a check constraint proving the bound) run beside the consumers:
 * built concurrently, validated without blocking writes. The swap itself is one short transaction whose exclusive lock
 * waits at most a couple of seconds for running transactions, tried again a few times. Statements of this version
 * that meet the partitioned table afterwards find it has changed (their ON CONFLICT has no unique index to use) and
 * go on with the partitioned statements; a delivery whose handler transaction was caught in the middle is retried.
 */
final class PartitionMigration {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(PartitionMigration.class);
    private static final int SWAP_ATTEMPTS = 10;
    /** The least time the bound leaves the move after its index is built, beyond the longest retention. */
    private static final Duration MARGIN = Duration.ofHours(1);

    private final DatabaseIdempotencyStore store;
    private final KeyTable table;
    private final String name;
    private final String schemaPrefix;
    private final Duration longestRetention;

    /**
     * @param longestRetention the longest retention the application writes keys with: the old table takes every key
     *        expiring before a bound this far ahead, and a margin more for the move's own time
     */
    PartitionMigration(DatabaseIdempotencyStore store, Duration longestRetention) {
        this.store = store;
        this.longestRetention = longestRetention;
        this.table = store.table();
        this.name = PartitionStatements.nameOf(table.name());
        this.schemaPrefix = table.name().indexOf('.') > 0 ? table.name().substring(0, table.name().indexOf('.') + 1)
                : "";
    }

    /** @return the name the old table takes as the first partition */
    String legacyName() {
        return schemaPrefix + name + "_plegacy";
    }

    /**
     * Moves the table, unless another instance is moving it (a session lock per table, tried, not waited for: that
     * instance's statements would otherwise meet this one's half-built index and constraint) or has moved it. A move
     * that fails drops the bound constraint and the index it added beside the consumers: the bound would otherwise
     * refuse every key written past it.
     *
     * @return false when another instance holds the move
     */
    boolean run() {
        // a session lock and CREATE INDEX CONCURRENTLY: on a connection of no transaction
        boolean moved = table.outsideTransactions(() -> table.connect(c -> {
            if (!locked(c, table.name())) {
                LOG.movedElsewhere(table.name());
                return false;
            }
            try {
                if (partitioned(c)) {
                    return true; // by another instance, since this one read the layout
                }
                try {
                    swap(c, prepare(c));
                } catch (SQLException | RuntimeException e) {
                    undoPrepare(c, e);
                    throw e;
                }
                return true;
            } finally {
                unlock(c);
            }
        }, "Could not move the idempotency table '" + table.name() + "' to partitions"));
        if (!moved) {
            return false;
        }
        store.layout(true);
        store.partitions().createAhead().await().indefinitely();
        LOG.partitioned(table.name());
        return true;
    }

    // Released before the connection goes back to the pool: a session lock outlives any transaction.
    private static void unlock(Connection c) throws SQLException {
        try {
            toAutoCommit(c);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_unlock_all()");
            }
        } catch (SQLException e) {
            // the connection is broken: closing it releases the lock
            c.close();
        }
    }

    // Back to statements of their own, whatever a failed swap left: what follows must not join its transaction.
    private static void toAutoCommit(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.rollback();
            c.setAutoCommit(true);
        }
    }

    private static boolean locked(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(PartitionStatements.moveLock())) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    private boolean partitioned(Connection c) throws SQLException {
        return Boolean.TRUE.equals(JdbcCalls.answered(TableChecks.partitioned(new JdbcCalls(c), table.name())));
    }

    private void undoPrepare(Connection c, Exception failure) {
        try (Statement s = c.createStatement()) {
            toAutoCommit(c);
            s.execute("SET lock_timeout = '10s'");
            try {
                s.execute("ALTER TABLE " + table.name() + " DROP CONSTRAINT IF EXISTS " + name + "_legacy_bound");
                s.execute("DROP INDEX IF EXISTS " + schemaPrefix + name + "_key_expiry");
            } finally {
                s.execute("RESET lock_timeout");
            }
        } catch (SQLException e) {
            failure.addSuppressed(e);
            LOG.moveNotUndone(table.name(), name + "_legacy_bound", e.getMessage());
        }
    }

    // Past every key there is, and past every key written until the swap, by any method: the longest retention ahead,
    // and, for the rest of the move (validating the bound, the swap), the configured retention and a period more, at
    // least an hour (a key past it would fail the bound's check while the move runs, or its validation). Read once the
    // index is built, which takes the longest. No further: every key expiring before it, written after the swap too,
    // goes to the old table, which is dropped whole once they have all expired.
    private Instant bound(Connection c) throws SQLException {
        Duration margin = store.plan().retention().plus(store.plan().period());
        Duration ahead = longestRetention.plus(margin.compareTo(MARGIN) < 0 ? MARGIN : margin);
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT greatest(now() + " + ahead.toMillis()
                        + " * interval '1 millisecond', (SELECT max(expires_at) + interval '1 second' FROM "
                        + table.name() + "))")) {
            rs.next();
            return rs.getTimestamp(1).toInstant();
        }
    }

    // The index and the constraint the swap needs, built without blocking the consumers (outside transactions).
    // @return the bound the constraint proves
    private Instant prepare(Connection c) throws SQLException {
        String index = schemaPrefix + name + "_key_expiry";
        try (Statement s = c.createStatement()) {
            // an invalid index left by an interrupted attempt would be taken as done
            s.execute("DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('" + index
                    + "') AND NOT indisvalid) THEN EXECUTE 'DROP INDEX " + index + "'; END IF; END $$");
            s.execute("CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS " + name + "_key_expiry ON " + table.name()
                    + " (scoped_key, expires_at)");
            Instant bound = bound(c);
            LOG.movingToPartitions(table.name(), legacyName(), bound);
            s.execute("SET lock_timeout = '2s'");
            try {
                s.execute("ALTER TABLE " + table.name() + " DROP CONSTRAINT IF EXISTS " + name + "_legacy_bound,"
                        + " ADD CONSTRAINT " + name + "_legacy_bound CHECK (expires_at < '" + bound + "') NOT VALID");
            } finally {
                s.execute("RESET lock_timeout");
            }
            s.execute("ALTER TABLE " + table.name() + " VALIDATE CONSTRAINT " + name + "_legacy_bound");
            return bound;
        }
    }

    private void swap(Connection c, Instant bound) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            for (int attempt = 1;; attempt++) {
                try (Statement s = c.createStatement()) {
                    s.execute(TableStatements.schemaLock());
                    s.execute("SET LOCAL lock_timeout = '2s'");
                    for (String statement : swapStatements(c, bound)) {
                        s.execute(statement);
                    }
                    c.commit();
                    return;
                } catch (SQLException e) {
                    c.rollback();
                    if (!"55P03".equals(e.getSQLState()) || attempt == SWAP_ATTEMPTS) { // lock_not_available
                        throw e;
                    }
                    LOG.partitioningWaits(table.name(), attempt);
                    sleep(attempt * 500L);
                }
            }
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    private List<String> swapStatements(Connection c, Instant bound) throws SQLException {
        String legacy = legacyName();
        String legacyName = PartitionStatements.nameOf(legacy);
        List<String> statements = new ArrayList<>();
        statements.add("LOCK TABLE " + table.name() + " IN ACCESS EXCLUSIVE MODE");
        statements.add("ALTER TABLE " + table.name() + " RENAME TO " + legacyName);
        // the key alone was the primary key; the partitions' is the key and its expiry
        String primaryKey = primaryKey(c);
        if (primaryKey != null) {
            statements.add("ALTER TABLE " + legacy + " DROP CONSTRAINT " + primaryKey);
        }
        statements.add("ALTER TABLE " + legacy + " ADD CONSTRAINT " + legacyName + "_pkey PRIMARY KEY USING INDEX "
                + name + "_key_expiry");
        // partitions are dropped whole, never purged by expiry
        statements.add("DROP INDEX IF EXISTS " + schemaPrefix + name + "_expires_at");
        statements.add("ALTER INDEX IF EXISTS " + schemaPrefix + name + "_claims RENAME TO " + legacyName + "_claims");
        // the old table's state checks, prepared again for each write of a row (see TableChecks.StateChecks): not kept
        TableChecks.StateChecks stateChecks = JdbcCalls.answered(TableChecks.stateChecks(new JdbcCalls(c), table.name()));
        if (stateChecks != null) {
            statements.add(stateChecks.drop(legacy));
        }
        // the partitioned table with the old one's columns as they are (a table Hibernate ORM made has other type
        // modifiers, which a partition must match) and its primary key
        statements.add("CREATE TABLE " + table.name() + " (LIKE " + legacy + " INCLUDING DEFAULTS, CONSTRAINT " + name
                + "_pkey PRIMARY KEY (scoped_key, expires_at)) PARTITION BY RANGE (expires_at)");
        statements.addAll(PartitionStatements.schema(table.name())); // from here on, each does nothing or adds
        statements.add("ALTER TABLE " + table.name() + " ATTACH PARTITION " + legacy + " FOR VALUES FROM (MINVALUE) TO ('"
                + bound + "')");
        statements.add("ALTER TABLE " + legacy + " DROP CONSTRAINT " + name + "_legacy_bound");
        statements.add("COMMENT ON TABLE " + legacy + " IS '" + PartitionStatements.comment(table.name()) + "'");
        return statements;
    }

    private String primaryKey(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT conname FROM pg_constraint WHERE conrelid ="
                + " to_regclass(?) AND contype = 'p'")) {
            ps.setString(1, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
