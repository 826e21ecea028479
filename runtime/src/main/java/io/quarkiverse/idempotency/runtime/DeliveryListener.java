package io.quarkiverse.idempotency.runtime;

/**
 * What a delivery's transitions report, for metrics and logs: the delivery's state machine does neither.
 */
interface DeliveryListener {

    /** The store answered the delivery's claim after {@code nanos}. */
    void claimAnswered(DeliveryView delivery, long nanos);

    /** The delivery took over a claim whose lease had run out: its owner died or stalled. */
    void tookOver(DeliveryView delivery);

    /**
     * The delivery ended: {@link DeliveryView#state()} says how, {@link DeliveryView#answer()} what the message is nacked with.
     *
     * @param cause the handler's or the store's failure behind that ending, or {@code null}
     */
    void ended(DeliveryView delivery, Throwable cause);
}
