package io.quarkiverse.idempotency.runtime;

/**
 * How one delivery ended, as counted by the metrics. Each delivery is counted once.
 */
public enum Outcome {
    /** The handler ran and its work is confirmed: acked. */
    HANDLED("handled"),
    /** The key was confirmed: acked without running. */
    DUPLICATE("duplicate"),
    /** Another delivery held the key: redelivered later. */
    BUSY("busy"),
    /** The handler failed within the attempt budget: the attempt was counted and the message redelivered later. */
    RETRIED("retried"),
    /** The handler failed on the last attempt of the budget: dead-lettered. */
    DEAD_LETTERED("dead-lettered"),
    /** No key could be computed: dead-lettered. */
    KEY_MISSING("key-missing"),
    /** The payload could not be converted for the method: dead-lettered at once. */
    UNREADABLE("unreadable"),
    /** The store failed: redelivered later. */
    STORE_ERROR("store-error"),
    /** The delivery's claim was taken over before it finished: redelivered later. */
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
