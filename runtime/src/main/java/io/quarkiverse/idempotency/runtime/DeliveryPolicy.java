package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

/**
 * The settings of one {@code @Idempotent} method on one channel, resolved at startup: the configuration's defaults,
 * then the annotation, then {@code quarkus.idempotency.channels."<channel>"}.
 *
 * @param retention how long a handled key is remembered
 * @param lease how long a lease-mode claim is honoured unless renewed
 * @param retry the attempt budget and the delays between attempts
 * @param asynchronousCommit whether the handler's transaction commits asynchronously, its message acked once the WAL
 *        is flushed past it
 * @param payloadMismatch what becomes of a duplicate whose payload differs from the one its key was written with
 */
public record DeliveryPolicy(Duration retention, Duration lease, RetryPolicy retry, boolean asynchronousCommit,
        PayloadMismatch payloadMismatch) {

    /** A policy that warns of payload mismatches. */
    public DeliveryPolicy(Duration retention, Duration lease, RetryPolicy retry, boolean asynchronousCommit) {
        this(retention, lease, retry, asynchronousCommit, PayloadMismatch.WARN);
    }

    /** @return whether the payloads of this method's messages are fingerprinted */
    public boolean fingerprints() {
        return payloadMismatch != PayloadMismatch.OFF;
    }

    /**
     * How long a message whose key another delivery holds waits before it comes back. A holder whose lease runs long
     * may be dead: its messages then wait for the lease rather than come back every requeue delay, but never longer
     * than a third of the lease, so that a live holder's duplicate is acked soon.
     *
     * @param leaseLeft how long the holder's lease still runs, or {@code null} when the store cannot tell
     * @param requeueDelay the configured delay, the shortest wait
     */
    public Duration busyDelay(Duration leaseLeft, Duration requeueDelay) {
        if (leaseLeft == null) {
            return requeueDelay;
        }
        Duration cap = lease.dividedBy(3);
        Duration wait = leaseLeft.compareTo(cap) > 0 ? cap : leaseLeft;
        return wait.compareTo(requeueDelay) > 0 ? wait : requeueDelay;
    }
}
