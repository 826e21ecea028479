package io.quarkiverse.idempotency.runtime;

/**
 * How keys are stored.
 */
public enum KeyStorage {
    /** As the key function made them: readable in the table, the Dev UI, logs and dead-letter headers. */
    READABLE,
    /**
     * As a keyed digest (HMAC-SHA-256 with {@code quarkus.idempotency.key-digest-secret}, base64url): keys that hold
     * order ids, e-mail addresses or customer numbers are not kept, logged or sent to dead-letter queues as they are.
     */
    DIGEST
}
