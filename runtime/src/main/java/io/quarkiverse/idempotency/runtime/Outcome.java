package io.quarkiverse.idempotency.runtime;

/**
 * What happened to one delivery, as counted by the metrics.
 */
public enum Outcome {
    /** The key was new: the handler ran. */
    FIRST("first"),
    /** The key was confirmed: acked without running. */
    DUPLICATE("duplicate"),
    /** Another delivery held a live claim: requeued. */
    BUSY("busy"),
    /** A stale claim was taken over: the handler ran. */
    TAKEOVER("takeover"),
    /** The handler failed, or its transaction rolled back: the claim was forgotten. */
    FAILED("failed"),
    /** No key could be computed: dead-lettered. */
    KEY_MISSING("key-missing"),
    /** The store failed at claim time: requeued. */
    STORE_ERROR("store-error");

    private final String tag;

    Outcome(String tag) {
        this.tag = tag;
    }

    /** @return the metric tag value */
    public String tag() {
        return tag;
    }
}
