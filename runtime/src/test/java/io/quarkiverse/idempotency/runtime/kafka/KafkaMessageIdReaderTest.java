package io.quarkiverse.idempotency.runtime.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.junit.jupiter.api.Test;

import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;

/**
 * The default key of a Kafka record: its CloudEvents id, else the configured header, else its topic, partition and
 * offset.
 */
class KafkaMessageIdReaderTest {

    @Test
    void cloudEventsIdFirst() {
        ConsumerRecord<String, String> record = record();
        record.headers().add("ce_id", bytes("evt-1")).add("x-request-id", bytes("req-1"));
        assertEquals("evt-1", new KafkaMessageIdReader("x-request-id").messageId(metadata(record)));
    }

    @Test
    void thenTheConfiguredHeader() {
        ConsumerRecord<String, String> record = record();
        record.headers().add("x-request-id", bytes("req-1"));
        assertEquals("req-1", new KafkaMessageIdReader("x-request-id").messageId(metadata(record)));
    }

    @Test
    void thenTheRecordsPlaceWhichARedeliveryShares() {
        ConsumerRecord<String, String> record = record();
        record.headers().add("x-request-id", bytes(""));
        assertEquals("payments-3@42", new KafkaMessageIdReader("x-request-id").messageId(metadata(record)));
        assertEquals("payments-3@42", new KafkaMessageIdReader((String) null).messageId(metadata(record())));
    }

    @Test
    void nothingForAnotherConnectorsMessage() {
        assertNull(new KafkaMessageIdReader((String) null).messageId(Metadata.empty()));
    }

    private static ConsumerRecord<String, String> record() {
        return new ConsumerRecord<>("payments", 3, 42, "key", "{}");
    }

    private static Metadata metadata(ConsumerRecord<String, String> record) {
        return Metadata.of(new IncomingKafkaRecordMetadata<>(record, "payments"));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
