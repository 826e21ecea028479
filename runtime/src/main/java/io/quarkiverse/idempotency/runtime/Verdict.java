package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.LeaseExpiredException;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.PayloadMismatchException;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * How a delivery ends, decided from what the store answered and the method's settings on its channel; decisions only,
 * which {@link Delivery} applies (once).
 *
 * @param state the state it ends in
 * @param answer what the message is settled with, or {@code null} when it is acked
 * @param cause what is reported with it, or {@code null}
 */
record Verdict(DeliveryState state, IdempotencyException answer, Throwable cause) {

    /** Another delivery holds the key: redelivered after the policy's delay, or when this process's holder ends. */
    static Verdict busy(DeliveryTarget target, Claim claim, DeliveryContext context) {
        return new Verdict(DeliveryState.BUSY, new DeliveryInProgressException(target.key(),
                target.policy().busyDelay(claim.busyFor(), context.requeueDelay()),
                context.holders().whenReleased(target.key())), null);
    }

    /**
     * @return how a delivery whose handler's work happened ends when confirming its claim on its own did not answer
     *         {@code true}: unconfirmed (the store failed), its claim lost (taken over); {@code null}: handled. Acked
     *         either way: the work happened.
     */
    static Verdict confirmedOnItsOwn(Boolean confirmed, Throwable failure) {
        if (failure != null) {
            return new Verdict(DeliveryState.UNCONFIRMED, null, failure);
        }
        return confirmed ? null : new Verdict(DeliveryState.CLAIM_LOST, null, null);
    }

    /**
     * @return why a delivery acked once its commit is durable is not: the flush found its key unconfirmed, so the commit
     *         that confirmed it was lost, with the work committed with it
     */
    static IllegalStateException commitLost() {
        return new IllegalStateException("the key is not confirmed after the WAL flush: its commit was lost, with the"
                + " work committed with it, by a crash or restart of the database server before it was durable");
    }

    /** The key was dead-lettered before: dead-lettered again with its reason, no new budget. */
    static Verdict deadLetteredBefore(ScopedKey key, Claim claim) {
        RecordedFailure reason = new RecordedFailure(claim.reason());
        return new Verdict(DeliveryState.DEAD_LETTERED, new AttemptsExhaustedException(key, claim.attempts(), reason),
                reason);
    }

    /** A duplicate of a message seen with those facts: acked, or dead-lettered when its payload differs and must not. */
    static Verdict duplicate(DeliveryTarget target, PayloadMatch payload, MessageFacts seen, MessageFacts arrived) {
        return payload == PayloadMatch.MISMATCH && target.policy().payloadMismatch() == PayloadMismatch.DEAD_LETTER
                ? new Verdict(DeliveryState.PAYLOAD_MISMATCH, new PayloadMismatchException(target.key(),
                        seen.messageId(), arrived.messageId()), null)
                : new Verdict(DeliveryState.DUPLICATE, null, null);
    }

    /** @return the dead letter of a key whose dead owner's attempt, counted, spent the budget; else {@code null} */
    static Verdict lostAttemptCounted(DeliveryTarget target, int counted, LeaseExpiredException lost) {
        return counted > 0 && target.policy().retry().spentBy(counted)
                ? new Verdict(DeliveryState.DEAD_LETTERED, new AttemptsExhaustedException(target.key(), counted, lost),
                        lost)
                : null;
    }

    /**
     * A failed attempt was counted: retried after its delay, or dead-lettered once the budget is spent; none counted
     * ({@code counted == 0}): the key's record is another delivery's now, and its outcome decides.
     */
    static Verdict afterCounted(DeliveryTarget target, int counted, Throwable failure, int failedBefore,
            Duration requeueDelay) {
        if (counted == 0) {
            return new Verdict(DeliveryState.CLAIM_LOST, notCounted(target, failedBefore, requeueDelay, failure), failure);
        }
        IdempotencyException outcome = target.policy().retry().afterFailure(target.key(), counted, failure);
        return new Verdict(outcome.requeue() ? DeliveryState.RETRYING : DeliveryState.DEAD_LETTERED, outcome, failure);
    }

    /** @return what a failure that is not counted is reported as: the next attempt, after the requeue delay */
    static HandlerFailedException notCounted(DeliveryTarget target, int failedBefore, Duration requeueDelay,
            Throwable failure) {
        return new HandlerFailedException(target.key(), failedBefore + 1, target.policy().retry().maxAttempts(),
                requeueDelay, failure);
    }
}
