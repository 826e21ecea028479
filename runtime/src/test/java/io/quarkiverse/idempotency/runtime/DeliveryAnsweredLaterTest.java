package io.quarkiverse.idempotency.runtime;

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.smallrye.mutiny.Uni;

/**
 * Every case of {@link DeliveryTest} again, with a store whose every call is answered later, on another thread, as the
 * reactive client answers: a transition written once must mean the same whichever way its store calls are answered.
 */
class DeliveryAnsweredLaterTest extends DeliveryTest {

    static ScheduledExecutorService elsewhere;

    @BeforeAll
    static void startElsewhere() {
        elsewhere = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "store-answers"));
    }

    @AfterAll
    static void stopElsewhere() throws InterruptedException {
        elsewhere.shutdownNow();
        elsewhere.awaitTermination(5, TimeUnit.SECONDS);
    }

    @Override
    KeyCalls calls(IdempotencyStore store) {
        return later(KeyCalls.onCallingThread(store));
    }

    @Override
    TransactionKeys transaction(IdempotencyStore store) {
        TransactionKeys atOnce = TransactionKeys.jta(store);
        return new TransactionKeys() {
            @Override
            public Uni<io.quarkiverse.idempotency.Claim> claim(io.quarkiverse.idempotency.ScopedKey key, String token,
                    java.time.Duration retention, boolean asynchronousCommit,
                    io.quarkiverse.idempotency.MessageFacts facts) {
                return later(atOnce.claim(key, token, retention, asynchronousCommit, facts));
            }

            @Override
            public Uni<Boolean> confirm(io.quarkiverse.idempotency.ScopedKey key, String token,
                    java.time.Duration retention) {
                return later(atOnce.confirm(key, token, retention));
            }
        };
    }

    static KeyCalls later(KeyCalls atOnce) {
        return new KeyCalls() {
            @Override
            public Uni<io.quarkiverse.idempotency.Claim> claim(io.quarkiverse.idempotency.ScopedKey key, String token,
                    java.time.Duration lease, java.time.Duration retention,
                    io.quarkiverse.idempotency.MessageFacts facts) {
                return later(atOnce.claim(key, token, lease, retention, facts));
            }

            @Override
            public Uni<Boolean> confirm(io.quarkiverse.idempotency.ScopedKey key, String token,
                    java.time.Duration retention) {
                return later(atOnce.confirm(key, token, retention));
            }

            @Override
            public Uni<Integer> recordFailure(io.quarkiverse.idempotency.ScopedKey key, String token, String failure,
                    int maxAttempts, java.time.Duration retention) {
                return later(atOnce.recordFailure(key, token, failure, maxAttempts, retention));
            }

            @Override
            public Uni<Boolean> release(io.quarkiverse.idempotency.ScopedKey key, String token) {
                return later(atOnce.release(key, token));
            }

            @Override
            public Uni<io.quarkiverse.idempotency.Claim> peek(io.quarkiverse.idempotency.ScopedKey key) {
                return later(atOnce.peek(key));
            }

            @Override
            public Uni<Boolean> awaitConfirmedDurably(List<io.quarkiverse.idempotency.ScopedKey> forms) {
                return later(atOnce.awaitConfirmedDurably(forms));
            }
        };
    }

    // made on another thread after a pause, so that the caller has moved on when the answer comes
    static <T> Uni<T> later(Uni<T> call) {
        return call.runSubscriptionOn(command -> elsewhere.schedule(command, 2, TimeUnit.MILLISECONDS));
    }
}
