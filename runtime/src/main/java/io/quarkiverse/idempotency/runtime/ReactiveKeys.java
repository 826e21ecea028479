package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.smallrye.mutiny.Uni;

/**
 * The store calls of a lease-mode delivery, answered without blocking the thread that asks: what a method that returns
 * {@code Uni} or {@code CompletionStage} without {@code @Blocking} needs, since it runs on the event loop. Each call
 * means what the {@link IdempotencyStore} method of the same name means, on the same keys: a blocking and a
 * non-blocking consumer of one key exclude each other. The database store's form goes through the reactive PostgreSQL
 * client; the memory store's answers at once.
 */
public interface ReactiveKeys {

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

    /** Makes the {@link ReactiveKeys} of a store: present when the application can make its calls without blocking. */
    interface Provider {

        /**
         * @return the store's calls without blocking
         * @throws IllegalStateException saying why, when this store's calls cannot be made so
         */
        ReactiveKeys keysOf(IdempotencyStore store);
    }

    /**
     * The calls of a store that never blocks (the memory store), answered on the calling thread.
     *
     * @param store a store whose every call returns at once
     */
    static ReactiveKeys answeredAtOnce(IdempotencyStore store) {
        return new ReactiveKeys() {
            @Override
            public Uni<Claim> claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
                return Uni.createFrom().item(() -> store.claim(key, token, lease, retention, facts));
            }

            @Override
            public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
                return Uni.createFrom().item(() -> store.confirm(key, token, retention));
            }

            @Override
            public Uni<Integer> recordFailure(ScopedKey key, String token, String failure, int maxAttempts,
                    Duration retention) {
                return Uni.createFrom().item(() -> store.recordFailure(key, token, failure, maxAttempts, retention));
            }

            @Override
            public Uni<Boolean> release(ScopedKey key, String token) {
                return Uni.createFrom().item(() -> store.release(key, token));
            }

            @Override
            public Uni<Claim> peek(ScopedKey key) {
                return Uni.createFrom().item(() -> store.peek(key));
            }
        };
    }
}
