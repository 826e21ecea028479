package io.quarkiverse.idempotency;

/**
 * What a {@linkplain DeadLetterReplays#replay replay} did.
 *
 * @param channel the channel whose dead letters were replayed
 * @param replayed the messages moved back to the channel's queue, each confirmed by the broker and then removed from
 *        the dead-letter queue
 * @param released the dead-lettered keys released for them (a key released before, or a message without a key, is
 *        replayed without a release)
 * @param skipped the dead letters it looked at and left, of another reason or channel (or, on Kafka, without a key)
 * @param left how many of the dead letters it looked at still wait for a replay: on RabbitMQ, those still in the
 *        dead-letter queue; on Kafka, whose dead-letter topic keeps every record, those whose key is not handled
 */
public record DeadLetterReplay(String channel, int replayed, int released, int skipped, long left) {
}
