package io.quarkiverse.idempotency.runtime.outbox;

/**
 * A message in the outbox: its row's id (the order it was written in), the id it carries, its channel, the key that
 * routes it ({@code null} for none), and its payload (the object itself on the fast path, read back from the row by the
 * relay).
 */
record OutboxRow(long id, String messageId, String channel, String key, Object payload, int attempts) {
}
