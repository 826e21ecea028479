package io.quarkiverse.idempotency.test.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Workers racing for the same keys: each on a thread of its own, all released at once, each claiming every key in an
 * order of its own, each claim with a token of its own.
 */
final class ClaimRace {

    static final Duration RETENTION = Duration.ofHours(24);
    static final Duration LEASE = Duration.ofSeconds(30);

    /** How many claims each key won, and how many of each answer came back. */
    record Result(Map<String, AtomicInteger> wins, Map<ClaimResult, AtomicInteger> answers) {

        int answered(ClaimResult result) {
            AtomicInteger n = answers.get(result);
            return n == null ? 0 : n.get();
        }
    }

    private ClaimRace() {
    }

    /**
     * @param onWin called on the winning worker's thread with the key it claimed and its claim's token
     */
    static Result run(IdempotencyStore store, int workers, String scope, List<String> keys,
            BiConsumer<ScopedKey, String> onWin) throws Exception {
        Result result = new Result(new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                String worker = "racer-" + w;
                List<String> order = new ArrayList<>(keys);
                Collections.shuffle(order);
                done.add(pool.submit(() -> {
                    start.await();
                    for (String key : order) {
                        String token = worker + "#" + key;
                        ScopedKey scoped = new ScopedKey(scope, key);
                        ClaimResult r = store.claim(scoped, token, LEASE, RETENTION).result();
                        result.answers().computeIfAbsent(r, x -> new AtomicInteger()).incrementAndGet();
                        if (r.claimed()) {
                            result.wins().computeIfAbsent(key, x -> new AtomicInteger()).incrementAndGet();
                            onWin.accept(scoped, token);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        return result;
    }

    /** @return the keys race-0 ... race-(n-1) */
    static List<String> keys(int n) {
        List<String> keys = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            keys.add("race-" + i);
        }
        return keys;
    }
}
