package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;

/**
 * {@link GroupCommit} without blocking: concurrent requests share one statement and one commit, for callers that must
 * not wait on their thread (the event loop).
 * <p>
 * A request sent when no batch of its kind is on its way is sent at once, alone: a lone delivery pays one statement,
 * as before. Requests sent while a batch is on its way wait for it; when it answers, every request that waited (at most
 * {@code maxSize}) goes in the next batch, sent before the answers are handed out, so a request waits at most for one
 * batch. Each request gets its own answer, or the failure of its batch.
 *
 * @param <Q> a request
 * @param <A> its answer
 */
final class AsyncGroupCommit<Q, A> {

    private final Function<List<Q>, Uni<List<A>>> run;
    private final int maxSize;
    private final ArrayDeque<Pending<Q, A>> waiting = new ArrayDeque<>();
    private boolean running;
    private final LongAdder batches = new LongAdder();
    private final LongAdder requests = new LongAdder();

    /**
     * @param run sends a batch: one answer per request, in order; a failure fails every request of the batch
     * @param maxSize the most requests in one batch
     */
    AsyncGroupCommit(Function<List<Q>, Uni<List<A>>> run, int maxSize) {
        if (maxSize < 1) {
            throw new IllegalArgumentException("A batch holds at least one request, not " + maxSize);
        }
        this.run = run;
        this.maxSize = maxSize;
    }

    /** @return the request's answer, once its batch answered */
    Uni<A> submit(Q request) {
        return Uni.createFrom().emitter(emitter -> {
            Pending<Q, A> mine = new Pending<>(request, emitter);
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
        List<Q> asked = new ArrayList<>(batch.size());
        for (Pending<Q, A> pending : batch) {
            asked.add(pending.request());
        }
        Uni<List<A>> answered;
        try {
            answered = run.apply(asked);
        } catch (RuntimeException e) {
            answered = Uni.createFrom().failure(e);
        }
        answered.subscribe().with(answers -> {
            sendNext(batch.size());
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).emitter().complete(answers.get(i));
            }
        }, failure -> {
            sendNext(batch.size());
            for (Pending<Q, A> pending : batch) {
                pending.emitter().fail(failure);
            }
        });
    }

    // The batch of `size` requests answered: the requests that waited meanwhile go now, together.
    private void sendNext(int size) {
        batches.increment();
        requests.add(size);
        List<Pending<Q, A>> next = new ArrayList<>();
        synchronized (this) {
            while (next.size() < maxSize && !waiting.isEmpty()) {
                next.add(waiting.poll());
            }
            running = !next.isEmpty();
        }
        if (!next.isEmpty()) {
            send(next);
        }
    }

    /** @return how many batches were sent and how many requests they held, since the start */
    long[] statistics() {
        return new long[] { batches.sum(), requests.sum() };
    }

    private record Pending<Q, A>(Q request, UniEmitter<? super A> emitter) {
    }
}
