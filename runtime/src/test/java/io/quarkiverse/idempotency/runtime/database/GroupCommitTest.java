package io.quarkiverse.idempotency.runtime.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link GroupCommit}: the callers that wait share batches and run them on their own threads. */
class GroupCommitTest {

    private final ExecutorService callers = Executors.newFixedThreadPool(8, r -> new Thread(r, "caller"));
    /** The batches, in the order they ran, and the threads that ran them. */
    private final List<List<Integer>> ran = Collections.synchronizedList(new ArrayList<>());
    private final Set<String> runners = Collections.synchronizedSet(new HashSet<>());

    @AfterEach
    void stop() {
        callers.shutdownNow();
    }

    private List<String> answer(List<Integer> batch) {
        ran.add(batch);
        runners.add(Thread.currentThread().getName());
        return batch.stream().map(i -> "a" + i).toList();
    }

    @Test
    void aLoneCallerRunsItsRequestAtOnceOnItsThread() {
        GroupCommit<Integer, String> commit = new GroupCommit<>(this::answer, 64);
        assertEquals("a7", commit.submit(7));
        assertEquals(List.of(List.of(7)), ran);
        assertEquals(Set.of(Thread.currentThread().getName()), runners);
    }

    @Test
    void callersThatArriveWhileABatchRunsShareTheNextOneRunByOneOfThem() throws Exception {
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        GroupCommit<Integer, String> commit = new GroupCommit<>(batch -> {
            if (batch.contains(0)) {
                firstRunning.countDown();
                await(release);
            }
            return answer(batch);
        }, 64);
        Future<String> first = callers.submit(() -> commit.submit(0));
        assertTrue(firstRunning.await(10, TimeUnit.SECONDS));
        List<Future<String>> others = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            int request = i;
            others.add(callers.submit(() -> commit.submit(request)));
        }
        while (commit.waiting() < 5) {
            Thread.onSpinWait();
        }
        release.countDown();
        assertEquals("a0", first.get(10, TimeUnit.SECONDS));
        for (int i = 1; i <= 5; i++) {
            assertEquals("a" + i, others.get(i - 1).get(10, TimeUnit.SECONDS));
        }
        assertEquals(2, ran.size(), "the first alone, then the five that waited together: " + ran);
        assertEquals(Set.of(1, 2, 3, 4, 5), new HashSet<>(ran.get(1)));
        assertEquals(Set.of("caller"), runners, "no thread of its own: the callers ran the batches");
        assertEquals(2, commit.statistics()[0]);
        assertEquals(6, commit.statistics()[1]);
    }

    @Test
    void aFailedBatchFailsItsCallersAndPartlyAnsweredOnlyThoseItSays() {
        GroupCommit<Integer, String> failing = new GroupCommit<>(batch -> {
            throw new IllegalStateException("connection lost");
        }, 64);
        assertThrows(IllegalStateException.class, () -> failing.submit(1));
        // request 2's look-up fails after the batch committed: only it fails
        GroupCommit<Integer, String> partly = new GroupCommit<>(batch -> {
            IllegalStateException lookUp = new IllegalStateException("look-up");
            throw new PartlyAnswered(batch.stream().<Object> map(i -> i == 2 ? lookUp : "a" + i).toList(), lookUp);
        }, 64);
        assertEquals("a1", partly.submit(1));
        assertThrows(IllegalStateException.class, () -> partly.submit(2));
        GroupCommit<Integer, String> error = new GroupCommit<>(batch -> {
            throw new NoClassDefFoundError("the driver");
        }, 64);
        assertThrows(NoClassDefFoundError.class, () -> error.submit(1));
    }

    @Test
    void manyCallersEachGetTheirOwnAnswerAndNoneIsLeftWaiting() throws Exception {
        GroupCommit<Integer, String> commit = new GroupCommit<>(this::answer, 4);
        List<Future<String>> answers = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            int request = i;
            answers.add(callers.submit(() -> commit.submit(request)));
        }
        for (int i = 0; i < 2_000; i++) {
            assertEquals("a" + i, answers.get(i).get(30, TimeUnit.SECONDS));
        }
        assertEquals(2_000, commit.statistics()[1]);
        assertTrue(ran.stream().allMatch(batch -> batch.size() <= 4), "at most maxSize a batch");
        assertEquals(0, commit.waiting());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
