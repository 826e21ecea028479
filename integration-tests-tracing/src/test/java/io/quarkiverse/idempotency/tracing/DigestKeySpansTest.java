package io.quarkiverse.idempotency.tracing;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkiverse.idempotency.runtime.opentelemetry.OpenTelemetryDeliveryTracing;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkus.test.QuarkusUnitTest;

/** Under {@code key-storage=digest}, a span carries the key's digest, never the key. */
class DigestKeySpansTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TracedApps.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(TracedPayments.class,
                    TracedApps.class, TracedApps.Exporter.class)))
            .overrideConfigKey("quarkus.idempotency.key-storage", "digest")
            .overrideConfigKey("quarkus.idempotency.key-digest-secret", "a-secret-of-at-least-thirty-two-characters");

    private static RabbitQueues broker;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-tracing-digest");
        broker.purge(DeliverySpansTest.QUEUE);
    }

    @AfterAll
    static void disconnect() throws Exception {
        broker.close();
    }

    @Test
    void theKeyOnTheSpanIsItsDigest() {
        broker.publish(DeliverySpansTest.QUEUE, "m-secret-d1", RabbitQueues.payment("D-1", ""));
        SpanData handled = await().atMost(Duration.ofSeconds(30))
                .until(() -> TracedApps.SPANS.getFinishedSpanItems().stream()
                        .filter(s -> "handled".equals(s.getAttributes().get(OpenTelemetryDeliveryTracing.OUTCOME)))
                        .findFirst(), Optional::isPresent)
                .get();
        String key = handled.getAttributes().get(OpenTelemetryDeliveryTracing.KEY);
        assertTrue(key.contains("hmac:"), key);
        assertFalse(key.contains("m-secret-d1"), key);
        assertFalse(handled.getAttributes().toString().contains("m-secret-d1"), "nowhere on the span");
    }
}
