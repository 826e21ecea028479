package io.quarkiverse.idempotency;

import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The programmatic form of {@link Idempotent}, for code that composes its own pipeline, with the same semantics as a
 * lease-mode method. Inject it:
 *
 * <pre>
 * &#64;Incoming("payments")
 * CompletionStage&lt;Void&gt; consume(Message&lt;Payment&gt; message) {
 *     return idempotency.handle(message, "payments", (payment, metadata) -&gt; "charge:" + payment.orderId(),
 *             payment -&gt; payments.charge(payment));
 * }
 * </pre>
 *
 * The key is claimed before the handler runs; a duplicate is acked without running it; a delivery in progress
 * elsewhere, a missing key and a store failure nack the message with the corresponding {@link IdempotencyException};
 * a handler failure counts an attempt against the key's budget and nacks the message with a
 * {@link HandlerFailedException} (redelivered after a growing delay) or, once the budget is spent, an
 * {@link AttemptsExhaustedException} (dead-lettered). The handler runs on a worker thread; the key is confirmed on its
 * own after it returns. Settings come from {@code quarkus.idempotency.*}, and from
 * {@code quarkus.idempotency.channels."<scope>".*} for the scope.
 */
public interface Idempotency {

    /**
     * Handles a message at most once per key, keyed by the broker's message id.
     *
     * @param message the message; it is acked or nacked by this method
     * @param scope the scope of the key (by convention the channel name)
     * @param handler the work, run at most once per key
     * @return completes when the message is acked or nacked
     */
    default <T> CompletionStage<Void> handle(Message<T> message, String scope, Consumer<? super T> handler) {
        return handle(message, scope, null, handler);
    }

    /**
     * Handles a message at most once per key.
     *
     * @param message the message; it is acked or nacked by this method
     * @param scope the scope of the key (by convention the channel name)
     * @param key the key function, or {@code null} for the broker's message id
     * @param handler the work, run at most once per key
     * @return completes when the message is acked or nacked
     */
    <T> CompletionStage<Void> handle(Message<T> message, String scope, KeyFunction<? super T> key,
            Consumer<? super T> handler);
}
