package io.quarkiverse.idempotency.runtime.devui;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.PoolIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.RecordStatements;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * {@link DatabaseKeys} for the store of an application with only the reactive PostgreSQL client: the same queries,
 * through its pool (the page's calls run on a worker thread, which waits for the answers). Loaded only when that store
 * is in use.
 */
final class ReactiveDatabaseKeys {

    private static final Duration WITHIN = Duration.ofSeconds(30);
    private static final List<String> STATES = List.of("CLAIMED", "CONFIRMED", "DEAD_LETTERED", "FAILED");

    private ReactiveDatabaseKeys() {
    }

    static void describe(IdempotencyStore store, JsonObject state, int rows) {
        PoolIdempotencyStore pool = (PoolIdempotencyStore) store;
        Map<String, Object> counts = new TreeMap<>();
        STATES.forEach(s -> counts.put(s, 0L));
        for (Row row : pool.pool().query(RecordStatements.countByState(pool.table())).execute().await()
                .atMost(WITHIN)) {
            counts.put(row.getString(0), row.getLong(1));
        }
        state.put("counts", new JsonObject(new LinkedHashMap<>(counts)));
        state.put("oldestClaims", records(pool, RecordStatements.oldestClaims(pool.table()), rows));
        state.put("recent", records(pool, RecordStatements.mostRecent(pool.table()), rows));
    }

    /** Releases a dead-lettered record by its id as the table holds it. */
    static boolean release(IdempotencyStore store, String id) {
        return ((PoolIdempotencyStore) store).releaseDeadLetter(id);
    }

    // Rows of RecordStatements.RECORD_COLUMNS, as the page shows them.
    private static JsonArray records(PoolIdempotencyStore pool, String query, int rows) {
        List<Object> records = new ArrayList<>();
        for (Row row : pool.pool().preparedQuery(query.replace("?", "$1")).execute(Tuple.of(rows)).await()
                .atMost(WITHIN)) {
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("id", row.getString(0));
            record.put("key", RecordStatements.unscoped(row.getString(0), row.getString(1)));
            record.put("scope", row.getString(1));
            record.put("state", row.getString(2));
            record.put("claimedBy", row.getString(3));
            record.put("recordedAt", instant(row.getOffsetDateTime(4)));
            record.put("leaseUntil", instant(row.getOffsetDateTime(5)));
            record.put("expiresAt", instant(row.getOffsetDateTime(6)));
            record.put("attempts", row.getInteger(7));
            record.put("lastFailure", row.getString(8));
            records.add(new JsonObject(record));
        }
        return new JsonArray(records);
    }

    private static String instant(OffsetDateTime time) {
        return time == null ? null : time.toInstant().toString();
    }
}
