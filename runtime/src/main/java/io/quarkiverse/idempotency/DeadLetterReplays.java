package io.quarkiverse.idempotency;

/**
 * Moves dead letters back to the channel they were dead-lettered from, once their cause is fixed: each dead letter of
 * the channel that matches has its key released (a fresh attempt budget) and a copy published to the channel's queue
 * or topic, confirmed by the broker. A replay stopped half-way (a crash, a broker outage) loses nothing and charges
 * nothing twice; run it again. On RabbitMQ a dead letter leaves the dead-letter queue only once the broker confirmed
 * its copy, and a copy confirmed twice is dropped as a duplicate. On Kafka, whose dead-letter topic keeps every
 * record, a record whose key is handled is not copied again: the keys' states are the replay's bookmark, kept for the
 * channel's retention (an older record whose key the store forgot is not copied). Inject it;
 * the management endpoint ({@code quarkus.idempotency.management.enabled}) replays through it. Blocking: never call it
 * on an event loop.
 */
public interface DeadLetterReplays {

    /** The most messages one replay examines (on Kafka: that it could copy, not those of keys handled). */
    int MAX_EXAMINED = 10_000;
    /** The most messages one replay moves back. */
    int MAX_LIMIT = 10_000;

    /**
     * Replays the dead letters of a channel, oldest first: those its {@code x-idempotency-reason} header matches, up to
     * {@code limit}; the others stay where they are, in their order. Looks at the dead letters that were there when it
     * started, {@value #MAX_EXAMINED} at the most. A dead letter without a key (its payload could not be read) is not
     * replayed. On Kafka, a key is copied once per replay, and a record keyed by its position gets that key as its id
     * on the copy.
     *
     * @param channel an {@code @Incoming} channel consumed by an {@code @Idempotent} method
     * @param reason only messages whose reason contains this text, ignoring case; {@code null} for all
     * @param limit how many messages at the most, 1 to {@value #MAX_LIMIT}
     * @return what was replayed
     * @throws IllegalArgumentException for an unknown channel or a limit out of range
     * @throws UnsupportedOperationException when the channel's dead letters cannot be replayed (not a RabbitMQ or Kafka
     *         channel, a queue the broker dead-letters by a policy of its own, a store that cannot look keys up)
     * @throws IllegalStateException when the broker or the store failed; what was replayed before stays replayed
     */
    DeadLetterReplay replay(String channel, String reason, int limit);
}
