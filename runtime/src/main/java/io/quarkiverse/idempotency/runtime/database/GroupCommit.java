package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Lets concurrent callers share one statement and one commit: group commit without a timer.
 * <p>
 * A caller that finds no batch running runs its request at once, alone: a lone delivery pays what it paid before.
 * Callers that arrive while a batch runs wait; when that batch has committed, the first of them runs the next batch,
 * made of every request that waited (at most {@code maxSize}), so the wait a caller spends for its batch is at most the
 * time one batch takes. Each caller gets its own answer, or the exception that failed its batch (or only it:
 * {@link PartlyAnswered}), and only then returns: its request committed (or failed) with the batch.
 * <p>
 * The caller's thread runs the batch it leads (blocking, as the store's statements are), so there is no thread of its
 * own; waiting parks, which suits virtual threads too.
 *
 * @param <Q> a request
 * @param <A> its answer
 */
public final class GroupCommit<Q, A> {

    private final Function<List<Q>, List<A>> run;
    private final int maxSize;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Pending<Q, A>> waiting = new ArrayDeque<>();
    private boolean running;
    private final LongAdder batches = new LongAdder();
    private final LongAdder requests = new LongAdder();

    /**
     * @param run runs a batch: one answer per request, in order; an exception fails every request of the batch
     * @param maxSize the most requests in one batch
     */
    public GroupCommit(Function<List<Q>, List<A>> run, int maxSize) {
        if (maxSize < 1) {
            throw new IllegalArgumentException("A batch holds at least one request, not " + maxSize);
        }
        this.run = run;
        this.maxSize = maxSize;
    }

    /**
     * Runs the request in the next batch and waits for its answer.
     *
     * @throws RuntimeException what failed the request's batch
     */
    public A submit(Q request) {
        Pending<Q, A> mine = new Pending<>(request);
        boolean lead;
        lock.lock();
        try {
            lead = !running;
            if (lead) {
                running = true;
            } else {
                waiting.add(mine);
            }
        } finally {
            lock.unlock();
        }
        if (!lead && !mine.turn.join()) {
            lead = true; // the batch before ended: this caller runs the next one
        }
        if (lead) {
            lead(mine);
        }
        if (mine.failure != null) {
            throw mine.failure;
        }
        return mine.answer;
    }

    private void lead(Pending<Q, A> mine) {
        List<Pending<Q, A>> batch = new ArrayList<>();
        lock.lock();
        try {
            batch.add(mine); // never in the queue now: it led at once, or was taken from it to lead
            while (batch.size() < maxSize && !waiting.isEmpty()) {
                batch.add(waiting.poll());
            }
        } finally {
            lock.unlock();
        }
        try {
            List<Q> asked = new ArrayList<>(batch.size());
            for (Pending<Q, A> pending : batch) {
                asked.add(pending.request);
            }
            List<A> answers = run.apply(asked);
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).answer = answers.get(i);
            }
        } catch (PartlyAnswered partly) {
            for (int i = 0; i < batch.size(); i++) {
                try {
                    batch.get(i).answer = partly.answer(i);
                } catch (RuntimeException failure) {
                    batch.get(i).failure = failure;
                }
            }
        } catch (RuntimeException | Error e) {
            RuntimeException failure = e instanceof RuntimeException r ? r : new IllegalStateException(e);
            for (Pending<Q, A> pending : batch) {
                pending.failure = failure;
            }
            if (e instanceof Error error) {
                throw error;
            }
        } finally {
            batches.increment();
            requests.add(batch.size());
            Pending<Q, A> next;
            lock.lock();
            try {
                next = waiting.poll();
                running = next != null;
            } finally {
                lock.unlock();
            }
            if (next != null) {
                next.turn.complete(false);
            }
            for (Pending<Q, A> pending : batch) {
                if (pending != mine) {
                    pending.turn.complete(true);
                }
            }
        }
    }

    /** @return how many batches ran, and how many requests they held, since the start */
    public long[] statistics() {
        return new long[] { batches.sum(), requests.sum() };
    }

    /** @return how many requests wait for a batch now */
    int waiting() {
        lock.lock();
        try {
            return waiting.size();
        } finally {
            lock.unlock();
        }
    }

    private static final class Pending<Q, A> {
        final Q request;
        /** true: answered (or failed); false: this caller runs the next batch */
        final CompletableFuture<Boolean> turn = new CompletableFuture<>();
        A answer;
        RuntimeException failure;

        Pending(Q request) {
            this.request = request;
        }
    }
}
