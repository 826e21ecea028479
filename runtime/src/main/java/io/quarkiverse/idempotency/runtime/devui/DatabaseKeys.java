package io.quarkiverse.idempotency.runtime.devui;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.quarkiverse.idempotency.runtime.database.SqlCalls;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkiverse.idempotency.runtime.database.SqlRow;
import io.quarkiverse.idempotency.runtime.database.TableStatements;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The database store's keys, read from its table the way the store reaches it (JDBC, or the reactive client's pool):
 * keys by state, the oldest live claims, the most recent keys. The page's calls run on a worker thread, which waits for
 * the answers.
 */
final class DatabaseKeys {

    private static final Duration WITHIN = Duration.ofSeconds(30);
    private static final List<String> STATES = List.of("CLAIMED", "CONFIRMED", "DEAD_LETTERED", "FAILED");

    private DatabaseKeys() {
    }

    static void describe(SqlKeyStore store, JsonObject state, int rows) {
        String table = store.tableName();
        store.onTable(db -> db.query(TableStatements.countByState(table)).chain(counted -> {
            Map<String, Object> counts = new TreeMap<>();
            STATES.forEach(s -> counts.put(s, 0L));
            counted.forEach(row -> counts.put(row.string(0), row.number(1)));
            state.put("counts", new JsonObject(new LinkedHashMap<>(counts)));
            return records(db, TableStatements.oldestClaims(table), rows);
        }).chain(oldest -> {
            state.put("oldestClaims", oldest);
            return records(db, TableStatements.mostRecent(table), rows);
        }).invoke(recent -> state.put("recent", recent))).await().atMost(WITHIN);
    }

    // Rows of TableStatements.RECORD_COLUMNS, as the page shows them.
    private static Uni<JsonArray> records(SqlCalls db, String query, int rows) {
        return db.query(query, rows).map(read -> {
            List<Object> records = new ArrayList<>(read.size());
            for (SqlRow row : read) {
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("id", row.string(0));
                record.put("key", TableStatements.unscoped(row.string(0), row.string(1)));
                record.put("scope", row.string(1));
                record.put("state", row.string(2));
                record.put("claimedBy", row.string(3));
                record.put("recordedAt", row.instant(4));
                record.put("leaseUntil", row.instant(5));
                record.put("expiresAt", row.instant(6));
                record.put("attempts", row.count(7));
                record.put("lastFailure", row.string(8));
                records.add(new JsonObject(record));
            }
            return new JsonArray(records);
        });
    }
}
