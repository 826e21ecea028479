package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;

/**
 * The lease-mode store calls of a delivery, each answering a {@code Uni}: {@link Delivery}'s transitions are written
 * once against this interface, whichever thread they run on. Each call means what the {@link IdempotencyStore} method
 * of the same name means, on the same keys, so that deliveries made through different calls of one store exclude each
 * other. Three executors: {@link #onCallingThread} (a blocking store on a worker thread, or a store that never blocks),
 * {@link #offloading} (a blocking store asked from an event loop), and the database store's calls through the reactive
 * PostgreSQL client ({@code PoolKeys}).
 */
public interface KeyCalls {

    /** @see IdempotencyStore#claim(ScopedKey, String, Duration, Duration, MessageFacts) */
    Uni<Claim> claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts);

    /** @see IdempotencyStore#confirm(ScopedKey, String, Duration) */
    Uni<Boolean> confirm(ScopedKey key, String token, Duration retention);

    /** @see IdempotencyStore#recordFailure(ScopedKey, String, String, int, Duration) */
    Uni<Integer> recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention);

    /** @see IdempotencyStore#release(ScopedKey, String) */
    Uni<Boolean> release(ScopedKey key, String token);

    /** @see IdempotencyStore#peek(ScopedKey) */
    Uni<Claim> peek(ScopedKey key);

    /** @see IdempotencyStore#awaitConfirmedDurably(List) */
    Uni<Boolean> awaitConfirmedDurably(List<ScopedKey> forms);

    /**
     * @return whether a call made now, on this thread, is answered before its subscription returns, with nothing of it
     *         left to run later or elsewhere ({@link SameThread})
     */
    default boolean answersOnCallingThread() {
        return false;
    }

    /** Makes the {@link KeyCalls} of a store that do not block: present when the application has such calls. */
    interface Provider {

        /**
         * @return the store's calls without blocking
         * @throws IllegalStateException saying why, when this store's calls cannot be made so
         */
        KeyCalls keysOf(IdempotencyStore store);
    }

    /**
     * The store's own calls, made on the thread that subscribes (answered before the subscription returns): for a
     * delivery on a worker thread, or a store that never blocks (the memory store) anywhere.
     */
    static KeyCalls onCallingThread(IdempotencyStore store) {
        return new StoreCalls(store) {
            @Override
            <T> Uni<T> call(Supplier<T> call) {
                return Uni.createFrom().item(call);
            }

            // a store that never blocks may still hand work to another thread: only the extension's own are known
            @Override
            public boolean answersOnCallingThread() {
                return store instanceof SynchronousStore;
            }
        };
    }

    /**
     * The store's own calls, made where they may block: on the calling thread when it is a worker thread, else on the
     * worker pool ({@link Blocking#call}); a delivery on an event loop whose store has no calls that do not block.
     */
    static KeyCalls offloading(IdempotencyStore store) {
        return new StoreCalls(store) {
            @Override
            <T> Uni<T> call(Supplier<T> call) {
                return Blocking.call(call);
            }

            // inline on a worker thread, and the store's own work there too
            @Override
            public boolean answersOnCallingThread() {
                return store instanceof SynchronousStore && !Context.isOnEventLoopThread();
            }
        };
    }

    /** An {@link IdempotencyStore}'s calls, each run by {@link #call}. */
    abstract class StoreCalls implements KeyCalls {

        private final IdempotencyStore store;

        StoreCalls(IdempotencyStore store) {
            this.store = store;
        }

        abstract <T> Uni<T> call(Supplier<T> call);

        @Override
        public Uni<Claim> claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
            return call(() -> store.claim(key, token, lease, retention, facts));
        }

        @Override
        public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
            return call(() -> store.confirm(key, token, retention));
        }

        @Override
        public Uni<Integer> recordFailure(ScopedKey key, String token, String failure, int maxAttempts,
                Duration retention) {
            return call(() -> store.recordFailure(key, token, failure, maxAttempts, retention));
        }

        @Override
        public Uni<Boolean> release(ScopedKey key, String token) {
            return call(() -> store.release(key, token));
        }

        @Override
        public Uni<Claim> peek(ScopedKey key) {
            return call(() -> store.peek(key));
        }

        @Override
        public Uni<Boolean> awaitConfirmedDurably(List<ScopedKey> forms) {
            return call(() -> store.awaitConfirmedDurably(forms));
        }
    }
}
