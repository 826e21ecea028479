package io.quarkiverse.idempotency.runtime.outbox;

/**
 * A message in the outbox: its row's id (the order it was written in), the id it carries, its channel, the key that
 * routes it ({@code null} for none), and its payload (the object itself on the fast path, read back from the row by the
 * relay); on the fast path, when its lease was first set ({@code lease_until} in microseconds since the epoch), which
 * tells this row from another that took its id and message id after a crash of the server lost it; 0 for the relay.
 */
record OutboxRow(long id, String messageId, String channel, String key, Object payload, int attempts, long leasedUntil) {

    OutboxRow(long id, String messageId, String channel, String key, Object payload, int attempts) {
        this(id, messageId, channel, key, payload, attempts, 0);
    }
}
