package io.quarkiverse.idempotency.runtime.kafka;

import java.nio.charset.StandardCharsets;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.apache.kafka.common.header.Header;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.MessageIdReader;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.smallrye.reactive.messaging.ce.CloudEventMetadata;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;

/**
 * The message id of a Kafka record, which Kafka itself does not have: its CloudEvents id (the {@code ce_id} header,
 * or the id of a structured CloudEvent), else the header named by {@code quarkus.idempotency.kafka.id-header}, else
 * {@code topic-partition@offset}, which is the same for every redelivery of one record (Kafka's own duplicates).
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

    @Override
    public String messageId(Metadata metadata) {
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
        String id = header(kafka, CE_ID);
        if (id == null && idHeader != null) {
            id = header(kafka, idHeader);
        }
        return id != null ? id : kafka.getTopic() + "-" + kafka.getPartition() + "@" + kafka.getOffset();
    }

    private static String header(IncomingKafkaRecordMetadata<?, ?> kafka, String name) {
        Header header = kafka.getHeaders().lastHeader(name);
        if (header == null || header.value() == null || header.value().length == 0) {
            return null;
        }
        return new String(header.value(), StandardCharsets.UTF_8);
    }
}
