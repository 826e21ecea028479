package io.quarkiverse.idempotency.runtime.kafka;

import org.apache.kafka.common.Uuid;

/**
 * Metadata the extension puts on each record of an {@code @Idempotent} Kafka channel as it is received: which
 * assignment of its partition polled it, and its topic's identity.
 *
 * @param partition the partition's state in this consumer
 * @param assignment the partition's assignment when the record was polled: once it changes, the record is someone
 *        else's
 * @param topicId the identity of the record's topic (a topic deleted and created again under its name has another)
 */
record PartitionStamp(KafkaAssignments.Partition partition, long assignment, Uuid topicId) {

    /** @return whether the consumer still owns the record: its partition was not revoked since it was polled */
    boolean owned() {
        return partition.assignment() == assignment;
    }
}
