package io.quarkiverse.idempotency.runtime.devui;

import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The database store's keys, read through the Panache entity; loaded only when that store is in use.
 */
final class DatabaseKeys {

    private DatabaseKeys() {
    }

    static void describe(JsonObject state, int rows) {
        QuarkusTransaction.requiringNew().run(() -> {
            JsonObject counts = new JsonObject();
            for (IdempotencyRecord.State s : IdempotencyRecord.State.values()) {
                counts.put(s.name(), IdempotencyRecord.countByState(s));
            }
            state.put("counts", counts);
            state.put("oldestClaims", rows(IdempotencyRecord.oldestClaims(rows)));
            state.put("recent", rows(IdempotencyRecord.mostRecent(rows)));
        });
    }

    private static JsonArray rows(List<IdempotencyRecord> records) {
        List<Object> rows = new ArrayList<>();
        // Through the entity's own method: Panache turns its fields into accessors this jar's classes do not see.
        for (IdempotencyRecord r : records) {
            rows.add(new JsonObject(r.describe()));
        }
        return new JsonArray(rows);
    }
}
