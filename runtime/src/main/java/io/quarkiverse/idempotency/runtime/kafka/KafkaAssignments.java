package io.quarkiverse.idempotency.runtime.kafka;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.IncomingKafkaRecord;
import io.smallrye.reactive.messaging.kafka.KafkaAdmin;

/**
 * The partitions one consumer of an {@code @Idempotent} Kafka channel owns, as its rebalances assign and revoke them,
 * and the identity of their topics, read from the cluster (a consumer never sees it): every record is stamped with
 * both as it is received ({@link PartitionStamp}).
 * <p>
 * A topic's identity is read again whenever its partitions are assigned, and when a partition's offsets go back (its
 * topic may have been deleted and created again under the same name, which a consumer may see without a rebalance).
 */
final class KafkaAssignments {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(KafkaAssignments.class);
    private static final Duration DESCRIBE_TIMEOUT = Duration.ofSeconds(10);

    private final String channel;
    private final Supplier<KafkaAdmin> adminFactory;
    private final KafkaMessageIdReader positionKeys;
    private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    private final Map<String, Uuid> topicIds = new ConcurrentHashMap<>();
    private KafkaAdmin admin;

    /**
     * @param adminFactory makes the admin client that reads topics' identities, when one is needed
     * @param positionKeys the reader of message ids, when a method of the channel keys records by their message id (so
     *        by their position when they carry no id); {@code null} when none does: no topic's identity is needed
     */
    KafkaAssignments(String channel, Supplier<KafkaAdmin> adminFactory, KafkaMessageIdReader positionKeys) {
        this.channel = channel;
        this.adminFactory = adminFactory;
        this.positionKeys = positionKeys;
    }

    /** Called on the polling thread: the partitions are this consumer's from now on. */
    void assigned(Collection<TopicPartition> assigned) {
        Set<String> topics = new HashSet<>();
        for (TopicPartition tp : assigned) {
            partition(tp).assigned();
            topics.add(tp.topic());
        }
        topicIds.keySet().removeAll(topics); // read again: the topic may be another one under the same name
    }

    /** Called on the polling thread: the partitions are no longer this consumer's. */
    void revoked(Collection<TopicPartition> revoked) {
        for (TopicPartition tp : revoked) {
            partition(tp).revoked();
        }
    }

    /** Stamps a record as it is received, reading its topic's identity first when it is not known. */
    <K, V> Uni<IncomingKafkaRecord<K, V>> stamp(IncomingKafkaRecord<K, V> record) {
        Partition partition = partition(new TopicPartition(record.getTopic(), record.getPartition()));
        if (partition.wentBack(record.getOffset())) {
            topicIds.remove(record.getTopic());
        }
        long assignment = partition.assignment();
        if (positionKeys == null || positionKeys.explicitId(record.getMetadata()) != null) {
            record.injectMetadata(new PartitionStamp(partition, assignment, null));
            return Uni.createFrom().item(record);
        }
        Uuid known = topicIds.get(record.getTopic());
        Uni<Uuid> topicId = known != null ? Uni.createFrom().item(known) : describe(record.getTopic());
        return topicId.map(id -> {
            record.injectMetadata(new PartitionStamp(partition, assignment, id));
            return record;
        });
    }

    private Uni<Uuid> describe(String topic) {
        return Uni.createFrom().deferred(() -> admin().describeTopics(Set.of(topic)))
                .ifNoItem().after(DESCRIBE_TIMEOUT).fail()
                .map(descriptions -> {
                    TopicDescription description = descriptions.get(topic);
                    Uuid id = description == null || description.topicId() == null ? Uuid.ZERO_UUID
                            : description.topicId();
                    topicIds.put(topic, id);
                    return id;
                })
                // the records of the partition wait: a key made without the topic's identity could be an old one's
                .onFailure().invoke(e -> LOG.topicIdentityUnread(channel, topic, e.toString()))
                .onFailure().retry().withBackOff(Duration.ofMillis(200), Duration.ofSeconds(5)).indefinitely();
    }

    private Partition partition(TopicPartition tp) {
        return partitions.computeIfAbsent(tp, ignored -> new Partition());
    }

    private synchronized KafkaAdmin admin() {
        if (admin == null) {
            admin = adminFactory.get();
        }
        return admin;
    }

    synchronized void close() {
        if (admin != null) {
            admin.closeAndAwait();
        }
    }

    /** One partition as this consumer sees it. */
    static final class Partition {
        private volatile long assignment;
        private volatile boolean handledSinceAssigned;
        private long lastOffset = -1;

        long assignment() {
            return assignment;
        }

        void assigned() {
            assignment++;
            handledSinceAssigned = false;
            lastOffset = -1;
        }

        void revoked() {
            assignment++;
        }

        /**
         * @return whether no record of this assignment was handled yet: the records before the first one are those
         *         the last owner may have received, among them the one it was handling when it died
         */
        boolean beforeFirstHandled() {
            return !handledSinceAssigned;
        }

        void handled() {
            handledSinceAssigned = true;
        }

        // Received in order, on the consumer's own thread.
        synchronized boolean wentBack(long offset) {
            boolean back = lastOffset >= 0 && offset < lastOffset;
            lastOffset = offset;
            return back;
        }
    }
}
