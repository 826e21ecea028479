package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.smallrye.mutiny.Uni;

/**
 * What the key table looks like, read the same way whichever way the store reaches it ({@link SqlCalls}): JDBC at
 * startup and for the health check ({@link DatabaseSchema}), the reactive client in an application without JDBC
 * ({@link PoolSchema}, {@link PoolIdempotencyStore#check()}).
 */
final class TableChecks {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(TableChecks.class);
    private static final Set<String> WARNED_OF_STATE_CHECKS = ConcurrentHashMap.newKeySet();

    private TableChecks() {
    }

    /** @return the columns this version needs that the table lacks (all of them when there is no table) */
    static Uni<List<String>> missingColumns(SqlCalls db, String table) {
        return db.query(TableStatements.columnsOf(), table).map(rows -> {
            Set<String> present = new HashSet<>();
            rows.forEach(row -> present.add(row.string(0)));
            List<String> missing = new ArrayList<>();
            for (String column : TableStatements.COLUMNS.keySet()) {
                if (!present.contains(column)) {
                    missing.add(column);
                }
            }
            return missing;
        });
    }

    /**
     * The state column's check constraints, when the table has any: the extension's tables of earlier versions, and
     * the tables Hibernate ORM creates from the entity's enum, had one listing the states. It is gone from this
     * version's table: PostgreSQL prepares a table's check constraints again for every statement that writes a row (it
     * reads them back from their stored form and plans them), which measured 10-15 us a write, the same order as the
     * whole claim statement. The states are the statements' own constants; nothing else writes them.
     *
     * @param names the constraints' names, to drop them
     * @param outdated whether one of them lists fewer states than this version writes (writes of a failure or a dead
     *        letter would then fail), rather than only costing time
     */
    record StateChecks(List<String> names, boolean outdated) {

        /** @return the statement that drops them all */
        String drop(String table) {
            return TableStatements.dropStateChecks(table, names);
        }
    }

    /**
     * Says once per table of a database (the health check validates again and again) that its state check
     * constraints, which validation leaves as they are, slow every write down, and how to drop them.
     *
     * @param database which database the table is in (its JDBC URL, or the reactive client's)
     */
    static void warnOfStateChecks(String database, String table, StateChecks checks) {
        if (WARNED_OF_STATE_CHECKS.add(database + " " + table)) {
            LOG.stateCheckSlowsWrites(table, String.join(", ", checks.names()), checks.drop(table));
        }
    }

    /**
     * What a validation does with the table's state checks: an outdated one (it refuses failed attempts and dead
     * letters) is missing states, to drop; a current one only costs time, and is warned of once.
     *
     * @param checks the table's state checks, or {@code null}
     * @param database which database the table is in (its JDBC URL, or the reactive client's)
     */
    static void validateStateChecks(StateChecks checks, String database, String table, List<String> missing,
            List<String> remedy) {
        if (checks != null && checks.outdated()) {
            // e.g. a table Hibernate ORM's schema update brought forward: it adds columns, never constraints
            missing.add("the states FAILED and DEAD_LETTERED in its state check constraint " + String.join(", ",
                    checks.names()) + " (it refuses failed attempts and dead letters; this version has no such"
                    + " constraint, which costs every write its preparation)");
            remedy.add(checks.drop(table));
        } else if (checks != null) {
            warnOfStateChecks(database, table, checks);
        }
    }

    /** @return the state column's check constraints listing the states; {@code null} when the table has none */
    static Uni<StateChecks> stateChecks(SqlCalls db, String table) {
        return db.query(TableStatements.stateChecks(), table).map(rows -> {
            if (rows.isEmpty()) {
                return null;
            }
            List<String> names = new ArrayList<>();
            boolean outdated = false;
            for (SqlRow row : rows) {
                names.add(row.string(0));
                outdated |= !row.string(1).contains("'DEAD_LETTERED'") || !row.string(1).contains("'FAILED'");
            }
            return new StateChecks(List.copyOf(names), outdated);
        });
    }

    /**
     * @return whether the table, its columns and its two indexes are there as this version wants, without a state
     *         check constraint
     */
    static Uni<Boolean> upToDate(SqlCalls db, String table) {
        return db.query(TableStatements.present(), table, table + "_expires_at", table + "_claims").chain(rows -> {
            SqlRow present = rows.get(0);
            if (!present.isTrue(0) || !present.isTrue(1) || !present.isTrue(2)) {
                return Uni.createFrom().item(false);
            }
            return missingColumns(db, table).chain(missing -> missing.isEmpty()
                    ? stateChecks(db, table).map(checks -> checks == null)
                    : Uni.createFrom().item(false));
        });
    }

    /**
     * Whether the connections commit durably by default. With {@code synchronous_commit = off} as their default (for
     * the server, the database, the role, or in the connection's options), every commit returns before its WAL record
     * is on disk: a message acked after its handler's commit, or after its key's confirm, could lose its work and its
     * key to a crash of the server, and never come back. Only a channel with {@code asynchronous-commit} waits for a
     * flush before its ack; every other ack needs a durable commit.
     *
     * @return why the store refuses these connections, naming where the setting comes from and the remedy; {@code null}
     *         when their commits are durable
     */
    static Uni<String> asynchronousByDefault(SqlCalls db) {
        return db.query(TableStatements.commitSetting()).map(rows -> {
            SqlRow row = rows.get(0);
            if (!"off".equals(row.string(0))) {
                return null;
            }
            return "The idempotency store's connections commit asynchronously by default (synchronous_commit = off,"
                    + " set by " + row.string(1) + ", for role " + row.string(2) + " on database " + row.string(3)
                    + "): an acked message's work and key could be lost by a crash of PostgreSQL, and the message"
                    + " never delivered again. Give this datasource durable commits (for example ALTER ROLE "
                    + row.string(2) + " SET synchronous_commit = on, or remove synchronous_commit=off from the"
                    + " datasource's connection options). To let handlers' transactions commit without waiting for the"
                    + " WAL flush, set quarkus.idempotency.channels.\"<channel>\".asynchronous-commit=true instead:"
                    + " its messages are acked only once a flush has passed their commit";
        });
    }

    /**
     * Why the table cannot be partitioned on this database, whichever way it is reached.
     *
     * @return null when it can: PostgreSQL 14 or later, READ COMMITTED the transactions' default, a name with room for
     *         its partitions'; else the reason
     */
    static Uni<String> againstPartitions(SqlCalls db, String table) {
        return db.query(PartitionStatements.server()).map(rows -> {
            int server = rows.get(0).count(0);
            String isolation = rows.get(0).string(1);
            if (server < PartitionPlan.MINIMUM_SERVER) {
                return "this server is PostgreSQL " + server + ", and partitions need " + PartitionPlan.MINIMUM_SERVER
                        + " or later (which detaches a partition without blocking the table)";
            }
            if (!"read committed".equals(isolation)) {
                return "the database's transactions are " + isolation + " by default"
                        + " (default_transaction_isolation), and keys on partitions are unique only under READ COMMITTED";
            }
            if (PartitionStatements.nameOf(table).length() > PartitionStatements.LONGEST_NAME) {
                return "its name leaves no room for its partitions' names (at most " + PartitionStatements.LONGEST_NAME
                        + " characters when partitioned)";
            }
            return null;
        });
    }

    /**
     * @return whether a partitioned table's columns and claims index are there as this version wants, without a state
     *         check constraint (its functions are read apart)
     */
    static Uni<Boolean> partitionedUpToDate(SqlCalls db, String table) {
        String schema = table.indexOf('.') > 0 ? table.substring(0, table.indexOf('.') + 1) : "";
        return db.query("SELECT to_regclass(?) IS NOT NULL", schema + PartitionStatements.nameOf(table) + "_claims")
                .chain(rows -> !rows.get(0).isTrue(0) ? Uni.createFrom().item(false)
                        : missingColumns(db, table).chain(missing -> missing.isEmpty()
                                ? stateChecks(db, table).map(checks -> checks == null)
                                : Uni.createFrom().item(false)));
    }

    /** @return whether the functions a partitioned table's keys are written with are there, in this version */
    static Uni<Boolean> functionsPresent(SqlCalls db, String table) {
        return db.query(PartitionStatements.functionsPresent(), PartitionStatements.functionNames(table).toArray())
                .map(rows -> rows.get(0).isTrue(0));
    }

    /** @return whether the table is partitioned; {@code null} when there is no table */
    static Uni<Boolean> partitioned(SqlCalls db, String table) {
        return db.query(PartitionStatements.layout(), table).map(rows -> rows.isEmpty() ? null : rows.get(0).isTrue(0));
    }

    /**
     * @param missing what the table lacks (columns, functions, constraints), in words
     * @param remedy the statements that bring it up to date
     * @param others the other ways to do it, in parentheses after the statements
     * @return the message that says a table is from an older version, and how to bring it up to date
     */
    static String olderVersion(String table, List<String> missing, List<String> remedy, String others) {
        return "The idempotency table '" + table + "' is from an older version of the extension: it lacks "
                + String.join(", ", missing) + ". Bring it up to date with " + String.join("; ", remedy) + " ("
                + others + ")";
    }
}
