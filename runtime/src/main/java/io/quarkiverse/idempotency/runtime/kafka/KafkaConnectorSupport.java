package io.quarkiverse.idempotency.runtime.kafka;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.runtime.ConnectorSupport;

/**
 * What a Kafka record's {@link PartitionStamp} tells: a record the consumer received before it handled any record of
 * its partition since the partition was assigned may have been delivered before (the last owner may have died
 * handling it); and a record whose partition was revoked since it was polled is no longer this consumer's.
 */
@Singleton
public class KafkaConnectorSupport implements ConnectorSupport {

    @Override
    public boolean mayBeRedelivered(Message<?> message) {
        PartitionStamp stamp = stamp(message);
        return stamp != null && stamp.partition().beforeFirstHandled();
    }

    @Override
    public boolean stillOwned(Message<?> message) {
        PartitionStamp stamp = stamp(message);
        return stamp == null || stamp.owned();
    }

    @Override
    public void handled(Message<?> message) {
        PartitionStamp stamp = stamp(message);
        if (stamp != null && stamp.owned()) {
            stamp.partition().handled();
        }
    }

    private static PartitionStamp stamp(Message<?> message) {
        return message.getMetadata(PartitionStamp.class).orElse(null);
    }
}
