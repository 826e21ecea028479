package io.quarkiverse.idempotency.runtime.devui;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The database store's keys, read from its table on its own datasource; loaded only when that store is in use.
 */
final class DatabaseKeys {

    private DatabaseKeys() {
    }

    static void describe(IdempotencyStore store, JsonObject state, int rows) {
        DatabaseIdempotencyStore.Description description = ((DatabaseIdempotencyStore) store).describe(rows);
        state.put("counts", new JsonObject(new java.util.LinkedHashMap<>(description.counts())));
        state.put("oldestClaims", rows(description.oldestClaims()));
        state.put("recent", rows(description.mostRecent()));
    }

    private static JsonArray rows(List<Map<String, Object>> records) {
        List<Object> rows = new ArrayList<>();
        for (Map<String, Object> r : records) {
            rows.add(new JsonObject(r));
        }
        return new JsonArray(rows);
    }
}
