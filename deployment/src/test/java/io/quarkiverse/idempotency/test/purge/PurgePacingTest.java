package io.quarkiverse.idempotency.test.purge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.test.support.DelegatingStore;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The purge paces itself: after each full batch it rests for as long as the batch took, times
 * {@code (100 - busy-percent) / busy-percent}, so deleting takes at most that share of its time.
 */
class PurgePacingTest {

    static final int BATCHES = 4;
    static final long BATCH_MILLIS = 40;

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[0], new String[0], SlowPurgeStore.class,
            DelegatingStore.class)
            .overrideConfigKey("quarkus.idempotency.purge.batch-size", "10")
            .overrideConfigKey("quarkus.idempotency.purge.busy-percent", "25");

    @Inject
    IdempotencyPurge purge;

    @Inject
    SlowPurgeStore store;

    @Test
    void restsThreeTimesAsLongAsEachBatchTookAtTwentyFivePercent() {
        store.batchesLeft = BATCHES;
        store.batchEnds.clear();
        store.batchStarts.clear();
        assertEquals(BATCHES * 10, purge.purgeExpired());
        assertEquals(BATCHES + 1, store.batchStarts.size(), "four full batches, then one that finds none left");
        for (int i = 0; i < BATCHES; i++) {
            long rest = store.batchStarts.get(i + 1) - store.batchEnds.get(i);
            long worked = store.batchEnds.get(i) - store.batchStarts.get(i);
            // a lower bound only: a busy machine can only make the rest longer
            assertTrue(rest >= 3 * worked - TimeUnit.MILLISECONDS.toNanos(1),
                    "after batch " + i + " worked " + worked / 1_000_000 + " ms, rested " + rest / 1_000_000 + " ms");
        }
    }

    /** A store whose purge statement takes 40 ms and deletes a full batch, {@link #batchesLeft} times. */
    @Singleton
    public static class SlowPurgeStore extends DelegatingStore {

        volatile int batchesLeft;
        final List<Long> batchStarts = new ArrayList<>();
        final List<Long> batchEnds = new ArrayList<>();

        @Override
        public int purgeExpired(int limit) {
            batchStarts.add(System.nanoTime());
            if (batchesLeft == 0) {
                return 0;
            }
            try {
                Thread.sleep(BATCH_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            batchesLeft--;
            batchEnds.add(System.nanoTime());
            return limit;
        }
    }
}
