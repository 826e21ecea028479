package io.quarkiverse.idempotency.runtime.kafka;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.DeliveryRevokedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.Delivery;

/**
 * Retries in place, for a channel that cannot requeue one message (Kafka): a delivery to retry is retried on the
 * method's worker thread, after its delay, until it is handled, a duplicate, or dead-lettered (the outcome then goes to
 * the connector's failure handler). The message is held meanwhile, so its offset is not committed past it and the
 * messages behind it wait, as the channel's order requires; once this consumer no longer owns it (its partition was
 * revoked), it is let go, unacknowledged, for its new owner.
 */
public final class RetryInPlace {

    /** One attempt of a delivery: the method's outcome, or the delivery's outcome as an {@link IdempotencyException}. */
    @FunctionalInterface
    public interface Attempt {
        Object run(Delivery delivery) throws Exception;
    }

    private RetryInPlace() {
    }

    /**
     * @param deliveries the deliveries, whose requeue delay is the retry's when the outcome names none
     * @param start starts a delivery of the message, one for each attempt
     * @param stillOwned whether the consumer still owns the message
     * @return the outcome of the attempt that ended it
     * @throws IdempotencyException the outcome of the last attempt when it is not to be retried; a
     *         {@link DeliveryRevokedException} when the consumer no longer owns the message
     */
    public static Object run(Deliveries deliveries, Supplier<Delivery> start, BooleanSupplier stillOwned, Attempt attempt)
            throws Exception {
        for (;;) {
            Delivery delivery = start.get();
            try {
                return attempt.run(delivery);
            } catch (IdempotencyException e) {
                Duration delay = e.retryDelay() != null ? e.retryDelay() : deliveries.requeueDelay();
                CompletionStage<Void> sooner = e instanceof DeliveryInProgressException busy ? busy.holderEnded() : null;
                if (!e.requeue() || !await(deliveries, delay, sooner, stillOwned)) {
                    throw stillOwned.getAsBoolean() ? e : new DeliveryRevokedException(delivery.key(), e);
                }
            }
        }
    }

    /**
     * Waits, on the calling (worker) thread, before a delivery is retried: the delay, or until {@code sooner}
     * completes (the delivery of this process that held the key ended), whichever comes first.
     *
     * @return {@code false} when the application began to stop meanwhile, the thread was interrupted, or the consumer
     *         no longer owns the message: the delivery must not be retried
     */
    private static boolean await(Deliveries deliveries, Duration delay, CompletionStage<Void> sooner,
            BooleanSupplier stillOwned) {
        long end = System.nanoTime() + delay.toNanos();
        CompletableFuture<Void> early = sooner == null ? null : sooner.toCompletableFuture();
        while (!deliveries.stopping() && stillOwned.getAsBoolean()) {
            long left = end - System.nanoTime();
            if (left <= 0 || (early != null && early.isDone())) {
                return true;
            }
            LockSupport.parkNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
            if (Thread.currentThread().isInterrupted()) {
                return false;
            }
        }
        return false;
    }
}
