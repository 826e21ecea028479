package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.subscription.UniEmitter;

/**
 * {@link GroupCommit} without blocking: concurrent requests share one statement and one commit, for callers that must
 * not wait on their thread (the event loop).
 * <p>
 * A request sent when no batch of its kind is on its way is sent at once, alone: a lone delivery pays one statement,
 * as before. Requests sent while a batch is on its way wait for it; when it answers, every request that waited (at most
 * {@code maxSize}) goes in the next batch, sent before the answers are handed out, so a request waits at most for one
 * batch. Each request gets its own answer, or the failure of its batch; a request whose subscriber cancelled while it
 * waited is not sent, unless its kind must be ({@link GivenUp#SENT}: a confirm of work that happened). Nothing thrown, not even
 * an {@link Error}, leaves the queue stuck; and a batch that answers at once
 * (a closed pool) does not send the next one from within its own call, so a long queue cannot grow the stack.
 *
 * @param <Q> a request
 * @param <A> its answer
 */
final class AsyncGroupCommit<Q, A> {

    private final Function<List<Q>, Uni<List<A>>> run;
    private final int maxSize;
    private final Executor elsewhere;
    private final GivenUp givenUp;
    private final ArrayDeque<Pending<Q, A>> waiting = new ArrayDeque<>();
    private boolean running;
    private final LongAdder batches = new LongAdder();
    private final LongAdder requests = new LongAdder();

    /**
     * @param run sends a batch: one answer per request, in order; a failure fails every request of the batch
     * @param maxSize the most requests in one batch
     */
    AsyncGroupCommit(Function<List<Q>, Uni<List<A>>> run, int maxSize, GivenUp givenUp) {
        this(run, maxSize, givenUp, Infrastructure.getDefaultExecutor());
    }

    /** @param elsewhere where the next batch is sent from when a batch answered within the call that sent it */
    AsyncGroupCommit(Function<List<Q>, Uni<List<A>>> run, int maxSize, GivenUp givenUp, Executor elsewhere) {
        if (maxSize < 1) {
            throw new IllegalArgumentException("A batch holds at least one request, not " + maxSize);
        }
        this.run = run;
        this.maxSize = maxSize;
        this.elsewhere = elsewhere;
        this.givenUp = givenUp;
    }

    /** What becomes of a request whose subscriber cancelled while it waited for its batch. */
    enum GivenUp {
        /** Not sent: nothing depends on it (a claim of a delivery given up, which then runs nothing). */
        DROPPED,
        /** Sent all the same, its answer ignored: it records what happened (a confirm of work done). */
        SENT
    }

    /** @return the request's answer, once its batch answered */
    Uni<A> submit(Q request) {
        return Uni.createFrom().emitter(emitter -> {
            Pending<Q, A> mine = new Pending<>(request, emitter);
            // a request given up while it waits is not sent, if its kind allows (once sent, its answer comes, and is
            // ignored)
            if (givenUp == GivenUp.DROPPED) {
                emitter.onTermination(() -> {
                    synchronized (this) {
                        waiting.remove(mine);
                    }
                });
            }
            synchronized (this) {
                if (running) {
                    waiting.add(mine);
                    return;
                }
                running = true;
            }
            send(List.of(mine));
        });
    }

    private void send(List<Pending<Q, A>> batch) {
        AtomicBoolean returned = new AtomicBoolean();
        try {
            List<Q> asked = new ArrayList<>(batch.size());
            for (Pending<Q, A> pending : batch) {
                asked.add(pending.request());
            }
            run.apply(asked).subscribe().with(answers -> answered(batch, answers, null, returned.get()),
                    failure -> answered(batch, null, failure, returned.get()));
        } catch (Throwable t) {
            answered(batch, null, t, false);
        } finally {
            returned.set(true);
        }
    }

    // The batch answered: the requests that waited meanwhile go now, together, then each of this batch gets its answer.
    private void answered(List<Pending<Q, A>> batch, List<A> answers, Throwable failure, boolean later) {
        batches.increment();
        requests.add(batch.size());
        List<Pending<Q, A>> next = new ArrayList<>();
        synchronized (this) {
            while (next.size() < maxSize && !waiting.isEmpty()) {
                next.add(waiting.poll());
            }
            running = !next.isEmpty();
        }
        if (!next.isEmpty()) {
            if (later) {
                send(next);
            } else {
                elsewhere.execute(() -> send(next));
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            UniEmitter<? super A> emitter = batch.get(i).emitter();
            try {
                if (failure instanceof PartlyAnswered partly) {
                    emitter.complete(partly.answer(i));
                } else if (failure != null) {
                    emitter.fail(failure);
                } else {
                    emitter.complete(answers.get(i));
                }
            } catch (Throwable t) {
                emitter.fail(t); // an answer missing for this request: the others still get theirs
            }
        }
    }

    /** @return how many batches were sent and how many requests they held, since the start */
    long[] statistics() {
        return new long[] { batches.sum(), requests.sum() };
    }

    private record Pending<Q, A>(Q request, UniEmitter<? super A> emitter) {
    }
}
