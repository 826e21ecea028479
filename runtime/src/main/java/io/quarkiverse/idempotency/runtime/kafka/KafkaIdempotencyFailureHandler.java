package io.quarkiverse.idempotency.runtime.kafka;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.header.internals.RecordHeader;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.DeliveryRevokedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.DeadLetterHeaders;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.Failures;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.IncomingKafkaRecord;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import io.smallrye.reactive.messaging.kafka.fault.KafkaFailureHandler;

/**
 * Maps idempotency outcomes to Kafka, which cannot requeue one record: a record to dead-letter goes to the channel's
 * dead-letter topic with the {@link DeadLetterHeaders} (its offset may be committed only once the dead-letter topic
 * acknowledged the copy); a record whose partition was revoked while it waited is left alone, unacknowledged, for its
 * new owner; a record to retry reaches this handler only when the retry could not happen in place (the application is
 * stopping), and then stops the channel without committing it, so that the next consumer of its partition gets it
 * again. A record whose payload could not be converted for the method
 * (it never reached it) is dead-lettered at once. Any other failure goes to the delegate strategy.
 */
record KafkaIdempotencyFailureHandler(String channel, KafkaFailureHandler deadLetters, KafkaFailureHandler delegate,
        KafkaFailureHandler stop, Deliveries deliveries) implements KafkaFailureHandler {

    @Override
    public <K, V> Uni<Void> handle(IncomingKafkaRecord<K, V> record, Throwable reason, Metadata metadata) {
        IdempotencyException outcome = Failures.outcomeToMap(record, channel, reason, deliveries);
        if (outcome == null) {
            return delegate.handle(record, reason, metadata);
        }
        if (outcome instanceof DeliveryRevokedException) {
            // its partition is another consumer's now: left unacknowledged, for that consumer to handle
            return Uni.createFrom().voidItem();
        }
        if (outcome.requeue()) {
            return stop.handle(record, outcome, metadata);
        }
        return deadLetters.handle(record, outcome, withHeaders(metadata, DeadLetterHeaders.of(channel, outcome)));
    }

    private static Metadata withHeaders(Metadata metadata, Map<String, Object> headers) {
        List<RecordHeader> recordHeaders = new ArrayList<>();
        headers.forEach((name, value) -> recordHeaders.add(new RecordHeader(name,
                String.valueOf(value).getBytes(StandardCharsets.UTF_8))));
        OutgoingKafkaRecordMetadata<Object> outgoing = OutgoingKafkaRecordMetadata.builder()
                .withHeaders(recordHeaders).build();
        return metadata == null ? Metadata.of(outgoing) : metadata.with(outgoing);
    }

    @Override
    public void terminate() {
        deadLetters.terminate();
        if (delegate != deadLetters) {
            delegate.terminate();
        }
    }
}
