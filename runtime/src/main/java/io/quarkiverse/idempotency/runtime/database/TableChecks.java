package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.smallrye.mutiny.Uni;

/**
 * What the key table looks like, read the same way whichever way the store reaches it ({@link SqlCalls}): JDBC at
 * startup and for the health check ({@link DatabaseSchema}), the reactive client in an application without JDBC
 * ({@link PoolSchema}, {@link PoolIdempotencyStore#check()}).
 */
final class TableChecks {

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
     * @return the name of the state column's check constraint when it is an earlier version's (it lists fewer states),
     *         to replace it; {@code null} when it is this version's
     */
    static Uni<String> outdatedStateConstraint(SqlCalls db, String table) {
        return db.query(TableStatements.stateChecks(), table).map(rows -> {
            for (SqlRow row : rows) {
                if (!row.string(1).contains("DEAD_LETTERED")) {
                    return row.string(0);
                }
            }
            return null;
        });
    }

    /** @return whether the table, its columns, its state constraint and its two indexes are there as this version wants */
    static Uni<Boolean> upToDate(SqlCalls db, String table) {
        return db.query(TableStatements.present(), table, table + "_expires_at", table + "_claims").chain(rows -> {
            SqlRow present = rows.get(0);
            if (!present.isTrue(0) || !present.isTrue(1) || !present.isTrue(2)) {
                return Uni.createFrom().item(false);
            }
            return missingColumns(db, table).chain(missing -> missing.isEmpty()
                    ? outdatedStateConstraint(db, table).map(outdated -> outdated == null)
                    : Uni.createFrom().item(false));
        });
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
