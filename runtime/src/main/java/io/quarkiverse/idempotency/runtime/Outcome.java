package io.quarkiverse.idempotency.runtime;

/**
 * How one delivery ended, as the metrics count it (each delivery once): the ending {@link DeliveryState}s, and the
 * two endings of a message that never became a delivery (no key, a payload the method cannot receive).
 */
public enum Outcome {
    /** The handler ran and its work is confirmed: acked. */
    HANDLED("handled"),
    /** The key was confirmed: acked without running. */
    DUPLICATE("duplicate"),
    /** The key was confirmed for a different payload, and such duplicates are dead-lettered: dead-lettered. */
    PAYLOAD_MISMATCH("payload-mismatch"),
    /** Another delivery held the key: redelivered later. */
    BUSY("busy"),
    /** The handler failed within the attempt budget: the attempt was counted and the message redelivered later. */
    RETRYING("retried"),
    /** The handler failed on the last attempt of the budget: dead-lettered. */
    DEAD_LETTERED("dead-lettered"),
    /** No key could be computed: dead-lettered. */
    KEY_MISSING("key-missing"),
    /** The payload could not be converted for the method: dead-lettered at once. */
    UNREADABLE("unreadable"),
    /** The store failed: redelivered later. */
    STORE_FAILED("store-error"),
    /** The handler ran but the store failed to confirm its key: acked; a later duplicate may run again. */
    UNCONFIRMED("unconfirmed"),
    /** The delivery's claim was taken over before it finished. */
    CLAIM_LOST("claim-lost");

    private final String tag;

    Outcome(String tag) {
        this.tag = tag;
    }

    /** @return the metric tag value */
    public String tag() {
        return tag;
    }
}
