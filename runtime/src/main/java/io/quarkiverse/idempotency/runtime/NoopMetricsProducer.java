package io.quarkiverse.idempotency.runtime;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.quarkus.arc.DefaultBean;

/**
 * Records nothing, unless Micrometer's implementation is registered; traces nothing, unless OpenTelemetry's is.
 */
@Singleton
public class NoopMetricsProducer {

    @Produces
    @Singleton
    @DefaultBean
    IdempotencyMetrics noop() {
        return IdempotencyMetrics.NOOP;
    }

    @Produces
    @Singleton
    @DefaultBean
    DeliveryTracing noTracing() {
        return DeliveryTracing.NONE;
    }
}
