package io.quarkiverse.idempotency.runtime.kafka;

import java.nio.charset.StandardCharsets;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.MessageIdReader;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.smallrye.reactive.messaging.ce.CloudEventMetadata;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;

/**
 * The message id of a Kafka record, which Kafka itself does not have: its CloudEvents id (the {@code ce_id} header,
 * or the id of a structured CloudEvent), else the header named by {@code quarkus.idempotency.kafka.id-header}, else
 * its position, {@code <topic>/<topic id>-<partition>@<offset>}, which is the same for every redelivery of one record
 * (Kafka's own duplicates) and names the topic's identity, so that a topic deleted and created again under its name
 * starts new keys.
 * Registered only when the Kafka connector is present.
 */
@Singleton
public class KafkaMessageIdReader implements MessageIdReader {

    static final String CE_ID = "ce_id";

    private final String idHeader;

    @Inject
    public KafkaMessageIdReader(IdempotencyConfig config) {
        this(config.kafka().idHeader().orElse(null));
    }

    /** @param idHeader the header read when a record has no CloudEvents id, or {@code null} */
    public KafkaMessageIdReader(String idHeader) {
        this.idHeader = idHeader;
    }

    /** @return the header read when a record has no CloudEvents id, or {@code null} */
    String idHeader() {
        return idHeader;
    }

    @Override
    public String messageId(Metadata metadata) {
        String id = explicitId(metadata);
        if (id != null) {
            return id;
        }
        IncomingKafkaRecordMetadata<?, ?> kafka = metadata.get(IncomingKafkaRecordMetadata.class).orElse(null);
        if (kafka == null) {
            return null;
        }
        // A topic deleted and created again under its name starts its offsets again: its identity tells them apart.
        PartitionStamp stamp = metadata.get(PartitionStamp.class).orElse(null);
        String topic = stamp == null || stamp.topicId() == null ? kafka.getTopic()
                : kafka.getTopic() + "/" + stamp.topicId();
        return topic + "-" + kafka.getPartition() + "@" + kafka.getOffset();
    }

    /**
     * @return the id a record carries (its CloudEvents id, else the configured header), or {@code null} when it is
     *         keyed by its position
     */
    String explicitId(Metadata metadata) {
        IncomingKafkaRecordMetadata<?, ?> kafka = null;
        for (Object m : metadata) {
            if (m instanceof IncomingKafkaRecordMetadata<?, ?> k) {
                kafka = k;
            } else if (m instanceof CloudEventMetadata<?> ce && ce.getId() != null) {
                return ce.getId();
            }
        }
        if (kafka == null) {
            return null;
        }
        return explicitId(kafka.getHeaders());
    }

    /** @return the id a record's headers carry (its {@code ce_id}, else the configured header), or {@code null} */
    String explicitId(Headers headers) {
        String id = header(headers, CE_ID);
        return id == null && idHeader != null ? header(headers, idHeader) : id;
    }

    /**
     * @return whether an id is the position {@link #messageId} gives a record of {@code topic} (with its topic's
     *         identity or without) at that partition and offset
     */
    static boolean isPosition(String id, String topic, String partition, String offset) {
        String end = "-" + partition + "@" + offset;
        if (!id.startsWith(topic) || !id.endsWith(end) || id.length() < topic.length() + end.length()) {
            return false;
        }
        String identity = id.substring(topic.length(), id.length() - end.length());
        return identity.isEmpty() || (identity.startsWith("/") && identity.indexOf('/', 1) < 0);
    }

    private static String header(Headers headers, String name) {
        Header header = headers.lastHeader(name);
        if (header == null || header.value() == null || header.value().length == 0) {
            return null;
        }
        return new String(header.value(), StandardCharsets.UTF_8);
    }
}
