package io.quarkiverse.idempotency.runtime.devui;

import java.util.Map;

import jakarta.inject.Inject;

import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.smallrye.common.annotation.Blocking;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * What the Dev UI card shows and does: keys by state, the oldest live claims, the most recent keys, the purge job's
 * last run, and a purge on demand. Registered in dev mode only.
 */
public class IdempotencyJsonRpcService {

    private static final int ROWS = 20;
    private static final String DATABASE_STORE = "io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore";

    @Inject
    IdempotencyStore store;

    @Inject
    IdempotencyPurge purge;

    @Blocking
    public JsonObject getState() {
        JsonObject state = new JsonObject().put("store", store.getClass().getSimpleName());
        // By name: applications without Hibernate ORM cannot load the database store's classes.
        if (store.getClass().getName().equals(DATABASE_STORE)) {
            DatabaseKeys.describe(state, ROWS);
        } else if (store instanceof InMemoryIdempotencyStore memory) {
            state.put("counts", new JsonObject(Map.of("keys", memory.size())));
            state.put("oldestClaims", new JsonArray()).put("recent", new JsonArray());
        }
        store.oldestClaimAge().ifPresent(age -> state.put("oldestClaimAgeSeconds", age.toSeconds()));
        purge.lastRun().ifPresentOrElse(run -> state.put("lastPurge", new JsonObject()
                .put("finishedAt", run.finishedAt().toString())
                .put("deleted", run.deleted())
                .put("tookMillis", run.took().toMillis())), () -> state.putNull("lastPurge"));
        return state;
    }

    @Blocking
    public JsonObject purgeNow() {
        return new JsonObject().put("deleted", purge.purgeExpired());
    }

}
