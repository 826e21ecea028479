package io.quarkiverse.idempotency.runtime;

import java.util.Locale;

/**
 * How a duplicate's payload compares with the payload its key was written with, by their fingerprints.
 */
public enum PayloadMatch {
    /** The same fingerprint: the same payload. */
    SAME,
    /**
     * Different fingerprints: two different payloads share the key. The key function is probably wrong, or the
     * producer reused an id.
     */
    MISMATCH,
    /** One of the two has no fingerprint (a payload type without a canonical form, a key written before fingerprints). */
    UNKNOWN;

    /** @return the metric tag value: the name in lower case */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
