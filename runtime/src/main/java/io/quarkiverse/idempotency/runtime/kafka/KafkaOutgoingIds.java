package io.quarkiverse.idempotency.runtime.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

import jakarta.inject.Singleton;

import org.apache.kafka.common.header.internals.RecordHeader;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.runtime.outbox.OutgoingIds;
import io.smallrye.reactive.messaging.ce.OutgoingCloudEventMetadata;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;

/**
 * An outbox record to Kafka carries its id as the CloudEvents id header, {@code ce_id}. On a channel that writes its
 * records as CloudEvents (its {@code cloud-events-type} and {@code cloud-events-source} set, {@code cloud-events} not
 * off), the connector writes the CloudEvent's id itself, a new random one for each record unless the message's
 * CloudEvent metadata names it: the id then goes there, so that every copy of a row carries the row's id (in a header
 * in binary mode, in the event's JSON in structured mode).
 */
@Singleton
public class KafkaOutgoingIds implements OutgoingIds {

    private static final Set<String> ALL = Set.of("all", "-1");

    @Override
    public String connector() {
        return KafkaChannelCheck.CONNECTOR;
    }

    @Override
    public Stamp stamp(String channel) {
        return writesCloudEvents(channel) ? KafkaOutgoingIds::asCloudEvent : KafkaOutgoingIds::withHeader;
    }

    private static Metadata withHeader(Metadata metadata, String messageId, String key) {
        OutgoingKafkaRecordMetadata.OutgoingKafkaRecordMetadataBuilder<Object> record = OutgoingKafkaRecordMetadata
                .builder()
                .addHeaders(new RecordHeader(KafkaMessageIdReader.CE_ID, messageId.getBytes(StandardCharsets.UTF_8)));
        return metadata.with((key == null ? record : record.withKey(key)).build());
    }

    private static Metadata asCloudEvent(Metadata metadata, String messageId, String key) {
        Metadata event = metadata.with(OutgoingCloudEventMetadata.builder().withId(messageId).build());
        return key == null ? event : event.with(OutgoingKafkaRecordMetadata.builder().withKey(key).build());
    }

    // The connector's own rule: CloudEvents on (the default), and the two attributes it cannot make up configured.
    private static boolean writesCloudEvents(String channel) {
        Config config = ConfigProvider.getConfig();
        String prefix = "mp.messaging.outgoing." + channel + ".";
        return config.getOptionalValue(prefix + "cloud-events", Boolean.class).orElse(true)
                && config.getOptionalValue(prefix + "cloud-events-type", String.class).isPresent()
                && config.getOptionalValue(prefix + "cloud-events-source", String.class).isPresent();
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
