package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.Context;

/**
 * The edge between the delivery's transitions, which answer a {@code Uni}, and threads that may block: a call that
 * may block runs off the event loop ({@link #call}), and a blocking caller waits for a transition ({@link #await}),
 * never on an event loop.
 */
final class Blocking {

    private Blocking() {
    }

    /** @return {@code work} run inline on a worker thread, or on the worker pool when asked from an event loop */
    static <T> Uni<T> call(Supplier<T> work) {
        Uni<T> uni = Uni.createFrom().item(work);
        return Context.isOnEventLoopThread() ? uni.runSubscriptionOn(Infrastructure.getDefaultWorkerPool()) : uni;
    }

    /**
     * Waits for a transition's outcome on the calling thread: at once when it is answered already (a store that answers
     * on the calling thread), else by blocking, which an event loop must never do.
     *
     * @return the item
     * @throws RuntimeException the failure, as it is
     * @throws IllegalStateException when the outcome is not there yet and the caller is an event loop
     */
    static <T> T await(Uni<T> transition) {
        CompletableFuture<T> outcome = transition.subscribeAsCompletionStage();
        if (!outcome.isDone() && Context.isOnEventLoopThread()) {
            outcome.cancel(false);
            throw new IllegalStateException("A store call of an @Idempotent delivery would block the event loop "
                    + Thread.currentThread().getName() + "; this is a bug of quarkus-idempotency, please report it");
        }
        try {
            return outcome.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
