package io.quarkiverse.idempotency.runtime;

/**
 * How a duplicate's payload compares with the payload its key was written with, by their fingerprints.
 */
public enum PayloadMatch {
    /** The same fingerprint: the same payload. */
    SAME("same"),
    /**
     * Different fingerprints: two different payloads share the key. The key function is probably wrong, or the
     * producer reused an id.
     */
    MISMATCH("mismatch"),
    /** One of the two has no fingerprint (a payload type without a canonical form, a key written before fingerprints). */
    UNKNOWN("unknown");

    private final String tag;

    PayloadMatch(String tag) {
        this.tag = tag;
    }

    /** @return the metric tag value */
    public String tag() {
        return tag;
    }
}
