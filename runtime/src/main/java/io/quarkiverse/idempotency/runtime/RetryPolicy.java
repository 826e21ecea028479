package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * The attempt budget of a method on a channel, and the growing delay between its attempts: {@code initialDelay}
 * doubled after each failed attempt, capped at {@code maxDelay}, each delay moved at random by up to {@code jitter}
 * of itself so that messages that failed together do not come back together.
 *
 * @param maxAttempts attempts before the message is dead-lettered, the first delivery included (at least 1)
 * @param initialDelay the delay after the first failed attempt
 * @param maxDelay the longest delay
 * @param jitter the share of each delay drawn at random, from 0 to 1
 */
public record RetryPolicy(int maxAttempts, Duration initialDelay, Duration maxDelay, double jitter) {

    /**
     * @param failedAttempts how many attempts have failed, this one included (from 1)
     * @return how long to wait before the next attempt
     */
    public Duration delayAfter(int failedAttempts) {
        long initial = initialDelay.toMillis();
        long max = Math.max(initial, maxDelay.toMillis());
        int doublings = Math.min(Math.max(0, failedAttempts - 1), 30);
        long delay = initial << doublings < 0 || initial << doublings > max ? max : initial << doublings;
        if (jitter > 0 && delay > 0) {
            long spread = (long) (delay * jitter);
            delay = delay - spread + ThreadLocalRandom.current().nextLong(2 * spread + 1);
        }
        return Duration.ofMillis(Math.max(0, delay));
    }

    /**
     * @return the longest a message can wait, in total, between its first attempt and its last: every delay of the
     *         budget at its upper jitter bound
     */
    public Duration longestWait() {
        long initial = initialDelay.toMillis();
        long max = Math.max(initial, maxDelay.toMillis());
        long total = 0;
        for (int failed = 1; failed < maxAttempts; failed++) {
            int doublings = Math.min(failed - 1, 30);
            long delay = initial << doublings < 0 || initial << doublings > max ? max : initial << doublings;
            total += delay + (long) (delay * Math.max(0, jitter));
        }
        return Duration.ofMillis(total);
    }

    /** @return whether the attempt that failed as the {@code failedAttempts}-th spent the budget */
    public boolean spentBy(int failedAttempts) {
        return failedAttempts >= maxAttempts;
    }

    /**
     * @param counted how many attempts of the key failed, the one that just failed included
     * @return what the message is nacked with: retried after its delay, or dead-lettered once the budget is spent
     */
    public IdempotencyException afterFailure(ScopedKey key, int counted, Throwable failure) {
        return spentBy(counted) ? new AttemptsExhaustedException(key, counted, failure)
                : new HandlerFailedException(key, counted, maxAttempts, delayAfter(counted), failure);
    }
}
