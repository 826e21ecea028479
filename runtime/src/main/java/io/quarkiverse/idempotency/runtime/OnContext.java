package io.quarkiverse.idempotency.runtime;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * Brings a result back to the message's Vert.x context, where the method runs (its context locals, its request
 * context): at once when the result arrives there already, as the reactive client's results usually do, else through
 * the context's queue.
 */
final class OnContext {

    private OnContext() {
    }

    /** @return {@code uni}'s outcome on {@code context}; a cancellation cancels {@code uni} too */
    static <T> Uni<T> resume(Uni<T> uni, Context context) {
        return resume(uni, context, true);
    }

    /**
     * @param cancelUpstream whether a cancellation cancels {@code uni} too; {@code false} for a claim, whose answer must
     *        arrive so that a claim got after its delivery was given up is released rather than left to run out
     * @return {@code uni}'s outcome on {@code context}
     */
    static <T> Uni<T> resume(Uni<T> uni, Context context, boolean cancelUpstream) {
        if (context == null) {
            return uni;
        }
        return Uni.createFrom().emitter(emitter -> {
            Cancellable upstream = uni.subscribe().with(item -> {
                if (Vertx.currentContext() == context) {
                    emitter.complete(item);
                } else {
                    context.runOnContext(ignored -> emitter.complete(item));
                }
            }, failure -> {
                if (Vertx.currentContext() == context) {
                    emitter.fail(failure);
                } else {
                    context.runOnContext(ignored -> emitter.fail(failure));
                }
            });
            if (cancelUpstream) {
                emitter.onTermination(upstream::cancel);
            }
        });
    }
}
