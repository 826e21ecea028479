package io.quarkiverse.idempotency.runtime;

import io.smallrye.mutiny.Uni;

/** The answers a transition gives at once, without a store call: the same few shapes wherever a delivery settles. */
final class Unis {

    /** Completed, with nothing. */
    static final Uni<Void> SETTLED = Uni.createFrom().voidItem();

    private Unis() {
    }

    /** @return {@code item}, at once */
    static <T> Uni<T> now(T item) {
        return Uni.createFrom().item(item);
    }

    /** @return failed with {@code failure}, at once */
    static <T> Uni<T> failure(Throwable failure) {
        return Uni.createFrom().failure(failure);
    }

    /** @return settled once {@code transition} has run, on the calling thread */
    static Uni<Void> settled(Runnable transition) {
        transition.run();
        return SETTLED;
    }
}
