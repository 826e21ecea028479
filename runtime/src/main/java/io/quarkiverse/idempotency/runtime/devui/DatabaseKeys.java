package io.quarkiverse.idempotency.runtime.devui;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkiverse.idempotency.runtime.database.KeyTable;
import io.quarkiverse.idempotency.runtime.database.RecordStatements;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The database store's keys, read from its table on its own datasource: keys by state, the oldest live claims, the
 * most recent keys. Loaded only when that store is in use.
 */
final class DatabaseKeys {

    private DatabaseKeys() {
    }

    static void describe(IdempotencyStore store, JsonObject state, int rows) {
        KeyTable table = ((DatabaseIdempotencyStore) store).table();
        table.onItsOwn(() -> table.connect(c -> {
            Map<String, Object> counts = new TreeMap<>();
            for (IdempotencyRecord.State s : IdempotencyRecord.State.values()) {
                counts.put(s.name(), 0L);
            }
            try (var ps = c.prepareStatement(RecordStatements.countByState(table.name()));
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    counts.put(rs.getString(1), rs.getLong(2));
                }
            }
            state.put("counts", new JsonObject(new LinkedHashMap<>(counts)));
            state.put("oldestClaims", records(c, RecordStatements.oldestClaims(table.name()), rows));
            state.put("recent", records(c, RecordStatements.mostRecent(table.name()), rows));
            return null;
        }, "Could not read the idempotency table '" + table.name() + "'"));
    }

    /**
     * Releases a dead-lettered record by its id as the table holds it ({@code scope:key}, or the digest of a long key,
     * which the page cannot turn back into its key).
     */
    static boolean release(IdempotencyStore store, String id) {
        KeyTable table = ((DatabaseIdempotencyStore) store).table();
        return table.onItsOwn(() -> table.update(RecordStatements.releaseDeadLetter(table.name()),
                ps -> ps.setString(1, id), "Could not release key '" + id + "'")) == 1;
    }

    // Rows of RecordStatements.RECORD_COLUMNS, as the page shows them.
    private static JsonArray records(java.sql.Connection c, String query, int rows) throws SQLException {
        List<Object> records = new ArrayList<>();
        try (var ps = c.prepareStatement(query)) {
            ps.setInt(1, rows);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Map<String, Object> record = new LinkedHashMap<>();
                    record.put("id", rs.getString(1));
                    record.put("key", RecordStatements.unscoped(rs.getString(1), rs.getString(2)));
                    record.put("scope", rs.getString(2));
                    record.put("state", rs.getString(3));
                    record.put("claimedBy", rs.getString(4));
                    record.put("recordedAt", String.valueOf(rs.getTimestamp(5).toInstant()));
                    record.put("leaseUntil", rs.getTimestamp(6) == null ? null : rs.getTimestamp(6).toInstant().toString());
                    record.put("expiresAt", String.valueOf(rs.getTimestamp(7).toInstant()));
                    record.put("attempts", rs.getInt(8));
                    record.put("lastFailure", rs.getString(9));
                    records.add(new JsonObject(record));
                }
            }
        }
        return new JsonArray(records);
    }
}
