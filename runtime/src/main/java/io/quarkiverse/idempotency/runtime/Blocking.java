package io.quarkiverse.idempotency.runtime;

import java.util.function.Supplier;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.Context;

/**
 * Runs store calls, which may block, off the event loop: inline when already on a worker thread, else on the worker
 * pool. An asynchronous handler's result may complete on an event loop even when the handler was {@code @Blocking}.
 */
final class Blocking {

    private Blocking() {
    }

    static <T> Uni<T> call(Supplier<T> work) {
        Uni<T> uni = Uni.createFrom().item(work);
        return Context.isOnEventLoopThread() ? uni.runSubscriptionOn(Infrastructure.getDefaultWorkerPool()) : uni;
    }
}
