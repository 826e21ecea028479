package io.quarkiverse.idempotency.tracing;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkiverse.idempotency.runtime.opentelemetry.OpenTelemetryDeliveryTracing;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With OpenTelemetry tracing, on the real RabbitMQ: each delivery's outcome is a span under the consumer span the
 * connector opened for the message, with what explains it (a duplicate's origin, an attempt's number and budget, a
 * dead letter's reason and failure), and a message without a key gets one too.
 */
class DeliverySpansTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TracedApps.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(TracedPayments.class,
                    TracedApps.class, TracedApps.Exporter.class)));

    static final String QUEUE = "traced-payments";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static RabbitQueues broker;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-tracing-it");
        broker.purge(QUEUE);
    }

    @AfterAll
    static void disconnect() throws Exception {
        broker.close();
    }

    @Test
    void aHandledMessageAndItsDuplicateEachGetASpanUnderTheirConsumerSpan() {
        broker.publish(QUEUE, "m-t1", RabbitQueues.payment("T-1", ""));
        SpanData handled = await().atMost(WAIT)
                .until(() -> TracedApps.span("traced-payments:m-t1", "handled"), Optional::isPresent)
                .get();
        broker.publish(QUEUE, "m-t1", RabbitQueues.payment("T-1", ""));
        SpanData duplicate = await().atMost(WAIT)
                .until(() -> TracedApps.span("traced-payments:m-t1", "duplicate"), Optional::isPresent).get();

        assertEquals("traced-payments idempotency", handled.getName());
        assertEquals(SpanKind.INTERNAL, handled.getKind());
        assertEquals(QUEUE, handled.getAttributes().get(OpenTelemetryDeliveryTracing.CHANNEL));
        assertEquals(StatusCode.UNSET, handled.getStatus().getStatusCode());
        assertEquals("republish", duplicate.getAttributes().get(OpenTelemetryDeliveryTracing.ORIGIN),
                "the same message id published again, not redelivered by the broker");
        for (SpanData span : List.of(handled, duplicate)) {
            SpanData consumer = byId(span.getParentSpanId());
            assertNotNull(consumer, "the parent is a span the application exported");
            assertEquals(SpanKind.CONSUMER, consumer.getKind(), "the connector's span of the message");
            assertEquals(consumer.getTraceId(), span.getTraceId());
        }
        assertFalse(handled.getTraceId().equals(duplicate.getTraceId()), "each message its own trace");
    }

    @Test
    void aFailingMessageShowsEachAttemptThenItsDeadLetter() {
        broker.publish(QUEUE, "m-t2", RabbitQueues.payment("T-2", "\"failures\": 99"));
        SpanData dead = await().atMost(WAIT).until(() -> TracedApps.span("traced-payments:m-t2", "dead-lettered"),
                Optional::isPresent).get();
        SpanData retried = TracedApps.span("traced-payments:m-t2", "retried").orElseThrow();

        assertEquals(1L, retried.getAttributes().get(OpenTelemetryDeliveryTracing.ATTEMPT));
        assertEquals(2L, retried.getAttributes().get(OpenTelemetryDeliveryTracing.MAX_ATTEMPTS));
        assertEquals(StatusCode.UNSET, retried.getStatus().getStatusCode(), "a retry is not an error yet");
        assertTrue(exception(retried).contains("card declined"));

        assertEquals(2L, dead.getAttributes().get(OpenTelemetryDeliveryTracing.ATTEMPT));
        assertEquals(2L, dead.getAttributes().get(OpenTelemetryDeliveryTracing.MAX_ATTEMPTS));
        assertEquals(StatusCode.ERROR, dead.getStatus().getStatusCode());
        assertNotNull(dead.getAttributes().get(OpenTelemetryDeliveryTracing.REASON));
        assertTrue(exception(dead).contains("card declined"));
        assertNotNull(byId(dead.getParentSpanId()), "under its consumer span");
    }

    @Test
    void aMessageWithoutAKeyGetsASpanWithItsReason() {
        broker.publish(QUEUE, null, RabbitQueues.payment("T-3", ""));
        SpanData keyless = await().atMost(WAIT).until(() -> TracedApps.SPANS.getFinishedSpanItems().stream()
                .filter(s -> "key-missing".equals(s.getAttributes().get(OpenTelemetryDeliveryTracing.OUTCOME)))
                .findFirst(), Optional::isPresent).get();
        assertEquals(StatusCode.ERROR, keyless.getStatus().getStatusCode());
        assertTrue(keyless.getAttributes().get(OpenTelemetryDeliveryTracing.REASON).contains("found no key"));
        assertNotNull(byId(keyless.getParentSpanId()), "under its consumer span");
    }

    private static SpanData byId(String spanId) {
        return TracedApps.SPANS.getFinishedSpanItems().stream().filter(s -> s.getSpanId().equals(spanId)).findFirst()
                .orElse(null);
    }

    private static String exception(SpanData span) {
        return span.getEvents().stream().filter(e -> "exception".equals(e.getName())).map(EventData::getAttributes)
                .map(Object::toString).findFirst().orElse("");
    }
}
