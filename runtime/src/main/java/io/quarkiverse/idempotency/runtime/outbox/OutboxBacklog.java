package io.quarkiverse.idempotency.runtime.outbox;

import java.time.Duration;

/**
 * The outbox's messages waiting to be sent or confirmed.
 *
 * @param waiting how many
 * @param oldest how long the oldest has waited
 * @param failing how many of them the broker refused at least once
 */
public record OutboxBacklog(long waiting, Duration oldest, long failing) {

    /** Before the first look. */
    public static final OutboxBacklog NONE = new OutboxBacklog(0, Duration.ZERO, 0);
}
