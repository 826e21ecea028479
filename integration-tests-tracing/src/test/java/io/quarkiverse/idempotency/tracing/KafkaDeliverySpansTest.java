package io.quarkiverse.idempotency.tracing;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkiverse.idempotency.runtime.opentelemetry.OpenTelemetryDeliveryTracing;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The same spans on Kafka, on the real broker: a record and its second sending under the same CloudEvents id, each a
 * span under the consumer span the Kafka connector opened for it, the second a duplicate.
 */
class KafkaDeliverySpansTest {

    private static final String TOPIC = "traced-events";

    @RegisterExtension
    static final QuarkusUnitTest APP = configure(TracedApps.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(TracedEvents.class,
                    TracedApps.class, TracedApps.Exporter.class))));

    private static QuarkusUnitTest configure(QuarkusUnitTest app) {
        String prefix = "mp.messaging.incoming.traced-events.";
        return app.overrideConfigKey("kafka.bootstrap.servers", bootstrap())
                .overrideConfigKey(prefix + "connector", "smallrye-kafka")
                .overrideConfigKey(prefix + "topic", TOPIC)
                .overrideConfigKey(prefix + "group.id", TOPIC)
                .overrideConfigKey(prefix + "auto.offset.reset", "earliest")
                .overrideConfigKey(prefix + "value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer")
                .overrideConfigKey(prefix + "dead-letter-queue.topic", TOPIC + "-dlq");
    }

    private static String bootstrap() {
        TestServices.Server kafka = TestServices.kafka();
        return kafka.host() + ":" + kafka.port();
    }

    @Test
    void aRecordAndItsSecondSendingEachGetASpanUnderTheirConsumerSpan() throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
            for (int i = 0; i < 2; i++) {
                ProducerRecord<String, String> record = new ProducerRecord<>(TOPIC, "order-k1", "shipped");
                record.headers().add("ce_id", "event-k1".getBytes(StandardCharsets.UTF_8));
                producer.send(record).get();
            }
        }
        SpanData duplicate = await().atMost(Duration.ofSeconds(60))
                .until(() -> TracedApps.span("traced-events:event-k1", "duplicate"), Optional::isPresent).get();
        SpanData handled = TracedApps.span("traced-events:event-k1", "handled").orElseThrow();
        assertEquals("redelivery", duplicate.getAttributes().get(OpenTelemetryDeliveryTracing.ORIGIN),
                "the same id read again");
        for (SpanData span : List.of(handled, duplicate)) {
            SpanData consumer = TracedApps.SPANS.getFinishedSpanItems().stream()
                    .filter(s -> s.getSpanId().equals(span.getParentSpanId())).findFirst().orElse(null);
            assertNotNull(consumer, "the parent is a span the application exported");
            assertEquals(SpanKind.CONSUMER, consumer.getKind(), "the Kafka connector's span of the record");
            assertEquals("traced-events idempotency", span.getName());
        }
    }
}
