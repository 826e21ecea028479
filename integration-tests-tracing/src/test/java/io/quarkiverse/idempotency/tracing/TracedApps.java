package io.quarkiverse.idempotency.tracing;

import java.util.Optional;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.quarkiverse.idempotency.runtime.opentelemetry.OpenTelemetryDeliveryTracing;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The module's application on the tests' RabbitMQ (the one {@code TEST_RABBITMQ} names, or a container), its spans
 * exported to memory: Quarkus's {@code cdi} exporter sends them to the {@link SpanExporter} bean produced here.
 */
final class TracedApps {

    /** The spans the application finished, by the exporter bean below. */
    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    private TracedApps() {
    }

    /** @return the application with the module's configuration, the tests' broker and spans kept in memory */
    static QuarkusUnitTest configure(QuarkusUnitTest app) {
        app.withConfigurationResource("application.properties")
                .overrideConfigKey("quarkus.otel.traces.exporter", "cdi")
                .overrideConfigKey("quarkus.otel.bsp.schedule.delay", "50ms");
        TestServices.rabbitmqSettings().forEach(app::overrideConfigKey);
        return app;
    }

    /** @return the first span finished for a key with an outcome */
    static Optional<SpanData> span(String key, String outcome) {
        return SPANS.getFinishedSpanItems().stream()
                .filter(s -> key.equals(s.getAttributes().get(OpenTelemetryDeliveryTracing.KEY)))
                .filter(s -> outcome.equals(s.getAttributes().get(OpenTelemetryDeliveryTracing.OUTCOME)))
                .findFirst();
    }

    /** Hands the application's spans to {@link #SPANS}. */
    @Singleton
    public static class Exporter {

        @Produces
        @Singleton
        SpanExporter spans() {
            return SPANS;
        }
    }
}
