package io.quarkiverse.idempotency.runtime;

/**
 * What a {@link Delivery}'s transitions report, for metrics and logs: the delivery's state machine does neither.
 */
interface DeliveryListener {

    /** The store answered the delivery's claim after {@code nanos}. */
    void claimAnswered(Delivery delivery, long nanos);

    /** The delivery took over a claim whose lease had run out: its owner died or stalled. */
    void tookOver(Delivery delivery);

    /**
     * The store could not count the delivery's failed attempt.
     *
     * @param failure why
     */
    void failureNotCounted(Delivery delivery, RuntimeException failure);

    /**
     * The delivery ended: {@link Delivery#state()} says how, {@link Delivery#answer()} what the message is nacked with.
     *
     * @param cause the handler's or the store's failure behind that ending, or {@code null}
     */
    void ended(Delivery delivery, Throwable cause);
}
