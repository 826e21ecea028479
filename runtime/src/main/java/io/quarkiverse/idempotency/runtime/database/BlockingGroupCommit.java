package io.quarkiverse.idempotency.runtime.database;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import io.quarkiverse.idempotency.runtime.database.GroupCommit.GivenUp;
import io.smallrye.mutiny.Uni;

/**
 * {@link GroupCommit} for callers that wait on their own thread, with batches that block (JDBC): a request's caller
 * waits for its answer, and the batches are run by the callers themselves, so there is no thread of its own.
 * <p>
 * A caller that finds no batch on its way runs its request at once, alone, on its thread. Callers that arrive
 * meanwhile wait; when that batch has committed, the next one (every request that waited, at most {@code maxSize}) is
 * run by one of the callers waiting for it, so the wait a caller spends for its batch is at most the time one batch
 * takes. Waiting parks, which suits virtual threads too.
 *
 * @param <Q> a request
 * @param <A> its answer
 */
public final class BlockingGroupCommit<Q, A> {

    private final WaitingCallers callers = new WaitingCallers();
    private final GroupCommit<Q, A> batches;

    /**
     * @param run runs a batch: one answer per request, in order; an exception fails every request of the batch (or
     *        each as it says: {@link PartlyAnswered})
     * @param maxSize the most requests in one batch
     */
    public BlockingGroupCommit(Function<List<Q>, List<A>> run, int maxSize) {
        this.batches = new GroupCommit<>(batch -> Uni.createFrom().item(() -> run.apply(batch)), maxSize, GivenUp.SENT,
                callers);
    }

    /**
     * Runs the request in the next batch and waits for its answer (running a batch of others' meanwhile, if it falls to
     * this caller).
     *
     * @throws RuntimeException what failed the request's batch
     */
    public A submit(Q request) {
        return callers.await(batches.submit(request));
    }

    /** @return how many batches ran, and how many requests they held, since the start */
    public long[] statistics() {
        return batches.statistics();
    }

    /** @return how many requests wait for a batch now */
    int waiting() {
        return batches.waiting();
    }

    /** Where a batch that follows another goes: to one of the callers that wait, which runs it on its thread. */
    private static final class WaitingCallers implements Executor {

        private final Queue<Runnable> batches = new ConcurrentLinkedQueue<>();
        private final Queue<Thread> parked = new ConcurrentLinkedQueue<>();

        @Override
        public void execute(Runnable batch) {
            batches.add(batch);
            wakeOne();
        }

        private void wakeOne() {
            Thread waiting = parked.poll();
            if (waiting != null) {
                LockSupport.unpark(waiting);
            }
        }

        // Waits for the answer, running the batches that fall to the callers meanwhile. A batch waits only for callers
        // whose requests it holds, who wait in here until it ran, so none is left behind.
        <A> A await(Uni<A> answer) {
            Answer<A> mine = new Answer<>(Thread.currentThread());
            answer.subscribe().with(mine::item, mine::failure);
            boolean interrupted = false; // waits as a blocking statement does, the interrupt kept for after
            while (!mine.done) {
                Runnable batch = batches.poll();
                if (batch != null) {
                    batch.run();
                    continue;
                }
                parked.add(mine.caller);
                // looked at again once this caller can be woken: a batch queued or an answer given before is not missed
                if (!mine.done && batches.isEmpty()) {
                    LockSupport.park(this);
                    interrupted |= Thread.interrupted();
                }
                parked.remove(mine.caller);
            }
            if (!batches.isEmpty()) {
                wakeOne(); // its wake-up may have gone to this caller, answered meanwhile
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (mine.failure instanceof RuntimeException failure) {
                throw failure;
            }
            if (mine.failure instanceof Error error) {
                throw error;
            }
            return mine.item;
        }
    }

    /** A caller's answer, and the caller to wake when it comes. */
    private static final class Answer<A> {
        final Thread caller;
        A item;
        Throwable failure;
        /** Written after the answer: reading it true makes the answer visible. */
        volatile boolean done;

        Answer(Thread caller) {
            this.caller = caller;
        }

        void item(A item) {
            this.item = item;
            answered();
        }

        void failure(Throwable failure) {
            // a checked one cannot come from a batch that returns its answers; kept as the cause if it ever does
            this.failure = failure instanceof RuntimeException || failure instanceof Error ? failure
                    : new IllegalStateException(failure);
            answered();
        }

        private void answered() {
            done = true;
            LockSupport.unpark(caller);
        }
    }
}
