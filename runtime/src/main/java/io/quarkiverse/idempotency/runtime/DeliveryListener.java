package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.MessageFacts;

/**
 * What a delivery's transitions report, for metrics and logs: the delivery's state machine does neither.
 */
interface DeliveryListener {

    /** The store answered the delivery's claim after {@code nanos}. */
    void claimAnswered(DeliveryView delivery, long nanos);

    /** The delivery took over a claim whose lease had run out: its owner died or stalled. */
    void tookOver(DeliveryView delivery);

    /**
     * The delivery's key was confirmed before: a duplicate, reported before the delivery ends.
     *
     * @param origin where it comes from
     * @param payload how its payload compares with the one the key was written with
     * @param age how long ago the key was confirmed, or {@code null} when the store cannot tell
     * @param seen the facts kept with the key, of the message that wrote it
     */
    void duplicate(DeliveryView delivery, DuplicateOrigin origin, PayloadMatch payload, Duration age,
            MessageFacts seen);

    /**
     * The delivery ended: {@link DeliveryView#state()} says how, {@link DeliveryView#answer()} what the message is nacked with.
     *
     * @param cause the handler's or the store's failure behind that ending, or {@code null}
     */
    void ended(DeliveryView delivery, Throwable cause);
}
