package io.quarkiverse.idempotency.runtime.health;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import io.quarkiverse.idempotency.IdempotencyStore;

/**
 * Readiness: the idempotency store can be used (reachable, its table present). While it cannot, every delivery to an
 * {@code @Idempotent} method is requeued, so the consumer is not ready. Registered when the application has SmallRye
 * Health.
 */
@Readiness
@ApplicationScoped
public class IdempotencyStoreHealthCheck implements HealthCheck {

    private final IdempotencyStore store;

    @Inject
    public IdempotencyStoreHealthCheck(IdempotencyStore store) {
        this.store = store;
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("Idempotency store")
                .withData("store", store.getClass().getSimpleName());
        try {
            store.check();
            return response.up().build();
        } catch (RuntimeException e) {
            return response.down().withData("error", e.getMessage() == null ? e.toString() : e.getMessage()).build();
        }
    }
}
