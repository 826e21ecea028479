package io.quarkiverse.idempotency.runtime.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.runtime.database.AsyncGroupCommit.GivenUp;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;

class AsyncGroupCommitTest {

    private final List<List<Integer>> sent = new ArrayList<>();
    private final List<UniEmitter<? super List<String>>> answering = new ArrayList<>();
    private final ExecutorService elsewhere = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        elsewhere.shutdownNow();
    }

    // A statement that answers when the test says so: each request's answer is "a" + its number.
    private Uni<List<String>> held(List<Integer> batch) {
        synchronized (sent) {
            sent.add(batch);
        }
        return Uni.createFrom().emitter(answering::add);
    }

    private static List<String> answers(List<Integer> batch) {
        return batch.stream().map(i -> "a" + i).toList();
    }

    @Test
    void aLoneRequestGoesAtOnceAndThoseArrivingMeanwhileShareTheNextBatch() {
        AsyncGroupCommit<Integer, String> commit = new AsyncGroupCommit<>(this::held, 64, GivenUp.DROPPED, elsewhere);
        List<UniAssertSubscriber<String>> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiting.add(commit.submit(i).subscribe().withSubscriber(UniAssertSubscriber.create()));
        }
        assertEquals(List.of(List.of(0)), sent, "the first alone; the others wait for it");
        answering.get(0).complete(answers(List.of(0)));
        assertEquals(List.of(List.of(0), List.of(1, 2, 3)), sent);
        answering.get(1).complete(answers(List.of(1, 2, 3)));
        for (int i = 0; i < 4; i++) {
            waiting.get(i).assertItem("a" + i);
        }
        assertEquals(2, commit.statistics()[0]);
        assertEquals(4, commit.statistics()[1]);
    }

    @Test
    void aFailedBatchFailsExactlyItsRequestsAndTheNextOneStillGoes() {
        AsyncGroupCommit<Integer, String> commit = new AsyncGroupCommit<>(this::held, 64, GivenUp.DROPPED, elsewhere);
        UniAssertSubscriber<String> first = commit.submit(0).subscribe().withSubscriber(UniAssertSubscriber.create());
        UniAssertSubscriber<String> second = commit.submit(1).subscribe().withSubscriber(UniAssertSubscriber.create());
        answering.get(0).fail(new IllegalStateException("connection lost"));
        first.assertFailedWith(IllegalStateException.class, "connection lost");
        answering.get(1).complete(answers(List.of(1)));
        second.assertItem("a1");
    }

    @Test
    void anErrorThrownWhileSendingNeitherLosesTheRequestsNorStopsTheQueue() {
        AtomicInteger calls = new AtomicInteger();
        Function<List<Integer>, Uni<List<String>>> brokenOnce = batch -> {
            if (calls.getAndIncrement() == 0) {
                throw new NoClassDefFoundError("the driver");
            }
            return Uni.createFrom().item(answers(batch));
        };
        AsyncGroupCommit<Integer, String> commit = new AsyncGroupCommit<>(brokenOnce, 64, GivenUp.DROPPED, elsewhere);
        commit.submit(0).subscribe().withSubscriber(UniAssertSubscriber.create())
                .assertFailedWith(NoClassDefFoundError.class, "the driver");
        commit.submit(1).subscribe().withSubscriber(UniAssertSubscriber.create()).assertItem("a1");
    }

    @Test
    void aRequestGivenUpWhileItWaitsIsNotSent() {
        AsyncGroupCommit<Integer, String> commit = new AsyncGroupCommit<>(this::held, 64, GivenUp.DROPPED, elsewhere);
        commit.submit(0).subscribe().withSubscriber(UniAssertSubscriber.create());
        Cancellable givenUp = commit.submit(1).subscribe().with(ignored -> {
        });
        UniAssertSubscriber<String> kept = commit.submit(2).subscribe().withSubscriber(UniAssertSubscriber.create());
        givenUp.cancel();
        answering.get(0).complete(answers(List.of(0)));
        assertEquals(List.of(List.of(0), List.of(2)), sent);
        answering.get(1).complete(answers(List.of(2)));
        kept.assertItem("a2");
    }

    @Test
    void aRequestOfAKindThatMustBeSentIsSentThoughGivenUpWhileItWaits() {
        AsyncGroupCommit<Integer, String> commit = new AsyncGroupCommit<>(this::held, 64, GivenUp.SENT, elsewhere);
        commit.submit(0).subscribe().withSubscriber(UniAssertSubscriber.create());
        Cancellable givenUp = commit.submit(1).subscribe().with(ignored -> {
        });
        givenUp.cancel();
        answering.get(0).complete(answers(List.of(0)));
        assertEquals(List.of(List.of(0), List.of(1)), sent, "a confirm records work that happened: it is sent");
    }

    @Test
    void batchesThatAnswerAtOnceDoNotGrowTheStack() {
        List<UniEmitter<? super List<String>>> first = new ArrayList<>();
        Function<List<Integer>, Uni<List<String>>> run = batch -> batch.get(0) == 0
                ? Uni.createFrom().emitter(first::add)
                : Uni.createFrom().item(answers(batch)); // a closed pool answers within the call
        AsyncGroupCommit<Integer, String> commit = new AsyncGroupCommit<>(run, 1, GivenUp.DROPPED, elsewhere);
        commit.submit(0).subscribe().withSubscriber(UniAssertSubscriber.create());
        int queued = 50_000;
        List<UniAssertSubscriber<String>> waiting = new ArrayList<>(queued);
        for (int i = 1; i <= queued; i++) {
            waiting.add(commit.submit(i).subscribe().withSubscriber(UniAssertSubscriber.create()));
        }
        first.get(0).complete(List.of("a0"));
        waiting.get(queued - 1).awaitItem(Duration.ofSeconds(30)).assertItem("a" + queued);
        assertEquals(queued + 1, commit.statistics()[0], "one batch each (maxSize 1), none lost");
    }

    @Test
    void aBatchHoldsAtLeastOneRequest() {
        assertThrows(IllegalArgumentException.class,
                () -> new AsyncGroupCommit<Integer, String>(this::held, 0, GivenUp.DROPPED));
    }
}
