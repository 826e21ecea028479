package io.quarkiverse.idempotency.runtime;

/**
 * What becomes of a duplicate whose payload's fingerprint differs from the one its key was written with.
 */
public enum PayloadMismatch {
    /**
     * Acknowledged as a duplicate, counted ({@code idempotency.duplicates} tagged {@code payload=mismatch}) and logged
     * once per key with both message ids.
     */
    WARN,
    /** Dead-lettered (outcome {@code payload-mismatch}): the key stays as it is, the message waits for an operator. */
    DEAD_LETTER,
    /** Not checked: no fingerprint is computed or kept. */
    OFF
}
