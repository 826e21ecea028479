package io.quarkiverse.idempotency.runtime.outbox;

/**
 * A message in the outbox: its row's id (the order it was written in), the id it carries, its channel, the key that
 * routes it ({@code null} for none), its payload (the object itself on the fast path, read back from the row by the
 * relay), and its lease's end as written or claimed ({@code lease_until} in microseconds since the epoch): every
 * change its sender makes to the row afterwards is fenced by it, and it tells this row from another that took its id
 * and message id after a crash of the server lost it.
 */
record OutboxRow(long id, String messageId, String channel, String key, Object payload, int attempts, long leasedUntil) {
}
