package io.quarkiverse.idempotency.runtime.devui;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.inject.Inject;

import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.OutcomeHistory;
import io.quarkiverse.idempotency.runtime.StoreDeadLetters;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * What the Dev UI shows and does: keys by state, the most recent dead letters (released from there), the oldest live
 * claims, the most recent keys, the purge's last run and progress, and a purge on demand that runs in the background.
 * Registered in dev mode only.
 */
public class IdempotencyJsonRpcService {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(IdempotencyJsonRpcService.class);
    private static final int ROWS = 20;

    @Inject
    IdempotencyStore store;

    @Inject
    IdempotencyPurge purge;

    @Inject
    StoreDeadLetters deadLetters;

    @Inject
    Deliveries deliveries;

    private final AtomicBoolean purging = new AtomicBoolean();
    /** Why the last purge started here failed, or null. */
    private volatile String purgeFailure;

    @Blocking
    public JsonObject getState() {
        JsonObject state = new JsonObject().put("store", store.getClass().getSimpleName());
        if (store instanceof SqlKeyStore database) {
            DatabaseKeys.describe(database, state, ROWS);
        } else if (store instanceof InMemoryIdempotencyStore memory) {
            describe(memory, state);
        }
        state.put("deadLetters", deadLetters(ROWS));
        store.oldestClaimAge().ifPresent(age -> state.put("oldestClaimAgeSeconds", age.toSeconds()));
        purge.lastRun().ifPresentOrElse(run -> state.put("lastPurge", new JsonObject()
                .put("finishedAt", run.finishedAt().toString())
                .put("deleted", run.deleted())
                .put("tookMillis", run.took().toMillis())), () -> state.putNull("lastPurge"));
        state.put("purging", purging.get());
        state.put("purgeFailure", purgeFailure);
        JsonArray duplicates = new JsonArray();
        deliveries.oldestDuplicates().forEach((channel, oldest) -> duplicates.add(new JsonObject()
                .put("channel", channel).put("oldestAgeSeconds", oldest.age().toMillis() / 1000.0)
                .put("retentionSeconds", oldest.retention().toSeconds())
                .put("share", (double) oldest.age().toMillis() / oldest.retention().toMillis())));
        state.put("duplicates", duplicates);
        OutcomeHistory history = deliveries.history();
        if (history != null) {
            JsonObject hour = new JsonObject();
            history.lastHour().forEach((series, values) -> hour.put(series, new JsonArray(values)));
            state.put("history", hour);
        }
        return state;
    }

    /** The card's label: how many keys the store holds. */
    @Blocking
    public String keyCount() {
        JsonObject state = getState();
        long keys = 0;
        for (Map.Entry<String, Object> count : state.getJsonObject("counts", new JsonObject())) {
            keys += ((Number) count.getValue()).longValue();
        }
        return keys + (keys == 1 ? " key" : " keys");
    }

    /**
     * Releases a dead-lettered key, so that a replay of its message runs with a fresh budget: by its scope and its key as
     * the page shows it (a long key's digest, as the table holds it), through the reader the management endpoint uses.
     */
    @Blocking
    public boolean releaseDeadLetter(String scope, String key) {
        return deadLetters.releaseAll(DeadLetterFilter.all().forKey(scope, key), "the Dev UI") == 1;
    }

    /** Starts a purge in the background; the page follows it through {@link #getState()}. */
    @NonBlocking
    public JsonObject startPurge() {
        if (!purging.compareAndSet(false, true)) {
            return new JsonObject().put("started", false);
        }
        purgeFailure = null;
        Infrastructure.getDefaultWorkerPool().execute(() -> {
            try {
                purge.purgeExpired();
            } catch (RuntimeException e) {
                purgeFailure = String.valueOf(e.getMessage());
            } finally {
                purging.set(false);
            }
        });
        return new JsonObject().put("started", true);
    }

    // The most recent dead letters, as the page's grids show keys.
    private JsonArray deadLetters(int rows) {
        JsonArray read = new JsonArray();
        try {
            for (DeadLetter dead : deadLetters.list(DeadLetterFilter.all().page(0, rows))) {
                read.add(new JsonObject().put("scope", dead.scope()).put("key", dead.key())
                        .put("state", "DEAD_LETTERED").put("attempts", dead.attempts())
                        .put("lastFailure", dead.reason()).put("messageId", dead.facts().messageId())
                        .put("recordedAt", String.valueOf(dead.deadLetteredAt()))
                        .put("expiresAt", String.valueOf(dead.expiresAt())));
            }
        } catch (UnsupportedOperationException e) {
            // an application's own store that cannot list its keys: the page shows none
        }
        return read;
    }

    private static void describe(InMemoryIdempotencyStore memory, JsonObject state) {
        List<Object> rows = new ArrayList<>();
        Map<String, Long> counts = new java.util.TreeMap<>();
        for (Map.Entry<ScopedKey, String> entry : memory.describe().entrySet()) {
            String recordState = entry.getValue().split(" ", 2)[0];
            counts.merge(recordState, 1L, Long::sum);
            if (rows.size() < ROWS) {
                rows.add(new JsonObject().put("scope", entry.getKey().scope()).put("key", entry.getKey().key())
                        .put("state", entry.getValue()));
            }
        }
        state.put("counts", new JsonObject(new java.util.LinkedHashMap<>(counts)));
        state.put("oldestClaims", new JsonArray()).put("recent", new JsonArray(rows));
    }
}
