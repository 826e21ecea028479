package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.EmptyUniSubscription;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
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
    static <T> T await(Delivery delivery, Supplier<Uni<T>> transition) {
        if (!delivery.answersOnCallingThread()) {
            return await(transition.get());
        }
        // settled before the subscription returns: assembled and run without a context capture per operator
        return SameThread.<T, RuntimeException> run(() -> await(transition.get()));
    }

    /** {@link #await(Delivery, Supplier)}, for a transition assembled already. */
    static <T> T await(Uni<T> transition) {
        Outcome<T> outcome = new Outcome<>();
        transition.subscribe().withSubscriber(outcome);
        if (!outcome.isDone() && Context.isOnEventLoopThread()) {
            outcome.cancel();
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

    /**
     * A transition's outcome, as a plain future: {@code subscribeAsCompletionStage} would make a contextual one, whose
     * thread contexts a caller that only joins it has no use for (a capture per message).
     */
    private static final class Outcome<T> extends CompletableFuture<T> implements UniSubscriber<T> {

        /** The subscription, or {@link EmptyUniSubscription#CANCELLED} once cancelled: a late one is cancelled too. */
        private final AtomicReference<UniSubscription> subscription = new AtomicReference<>();

        @Override
        public void onSubscribe(UniSubscription subscription) {
            if (!this.subscription.compareAndSet(null, subscription)) {
                subscription.cancel(); // cancelled before it arrived (a call run later on the worker pool)
            }
        }

        @Override
        public void onItem(T item) {
            complete(item);
        }

        @Override
        public void onFailure(Throwable failure) {
            completeExceptionally(failure);
        }

        void cancel() {
            UniSubscription current = subscription.getAndSet(EmptyUniSubscription.CANCELLED);
            if (current != null) {
                current.cancel();
            }
        }
    }
}
