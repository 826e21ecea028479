package io.quarkiverse.idempotency.runtime.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

import jakarta.inject.Singleton;

import org.apache.kafka.common.header.internals.RecordHeader;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.runtime.outbox.OutgoingIds;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;

/** An outbox record to Kafka carries its id as the CloudEvents id header, {@code ce_id}. */
@Singleton
public class KafkaOutgoingIds implements OutgoingIds {

    private static final Set<String> ALL = Set.of("all", "-1");

    @Override
    public String connector() {
        return KafkaChannelCheck.CONNECTOR;
    }

    @Override
    public Metadata with(Metadata metadata, String messageId, String key) {
        OutgoingKafkaRecordMetadata.OutgoingKafkaRecordMetadataBuilder<Object> record = OutgoingKafkaRecordMetadata
                .builder()
                .addHeaders(new RecordHeader(KafkaMessageIdReader.CE_ID, messageId.getBytes(StandardCharsets.UTF_8)));
        if (key != null) {
            record.withKey(key);
        }
        return metadata.with(record.build());
    }

    @Override
    public String unconfirmed(String channel) {
        String prefix = "mp.messaging.outgoing." + channel + ".";
        // unset only when the build did not know the channel's connector: the connector's own default is 1
        String acks = ConfigProvider.getConfig().getOptionalValue(prefix + "acks", String.class).orElse("1");
        if (!ALL.contains(acks.toLowerCase(Locale.ROOT))) {
            return prefix + "acks is " + acks + ": the connector would count a record as sent before every in-sync"
                    + " replica had it, and the outbox would delete it then. Remove the setting (the extension sets it"
                    + " to all for outbox channels) or set it to all";
        }
        boolean waits = ConfigProvider.getConfig().getOptionalValue(prefix + "waitForWriteCompletion", Boolean.class)
                .orElse(true);
        return waits ? null
                : prefix + "waitForWriteCompletion is false: the connector would count a record as sent before Kafka"
                        + " acknowledged it, and the outbox would delete it then. Remove the setting";
    }
}
