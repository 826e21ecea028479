package io.quarkiverse.idempotency.runtime.health;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import io.quarkiverse.idempotency.IdempotencyStore;

/**
 * Readiness: the idempotency store can be used (reachable, its table present). While it cannot, every delivery to an
 * {@code @Idempotent} method is redelivered later, so the consumer is not ready. Registered when the application has
 * SmallRye Health and {@code quarkus.idempotency.health.enabled}. The store is asked at most once per
 * {@value FreshResponse#FRESH_MILLIS} ms, however often the probe is called.
 */
@Readiness
@ApplicationScoped
public class IdempotencyStoreHealthCheck implements HealthCheck {

    private final IdempotencyStore store;
    private final FreshResponse fresh = new FreshResponse(this::check);

    @Inject
    public IdempotencyStoreHealthCheck(IdempotencyStore store) {
        this.store = store;
    }

    @Override
    public HealthCheckResponse call() {
        return fresh.get();
    }

    private HealthCheckResponse check() {
        var response = HealthCheckResponse.named("Idempotency store").withData("store",
                store.getClass().getSimpleName());
        try {
            store.check();
            return response.up().build();
        } catch (RuntimeException e) {
            return response.down().withData("error", e.getMessage() == null ? e.toString() : e.getMessage()).build();
        }
    }
}
