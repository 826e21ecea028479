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
 * {@value #FRESH_MILLIS} ms, however often the probe is called.
 */
@Readiness
@ApplicationScoped
public class IdempotencyStoreHealthCheck implements HealthCheck {

    static final long FRESH_MILLIS = 2_000;

    private final IdempotencyStore store;
    private volatile HealthCheckResponse last;
    private volatile long lastAt;

    @Inject
    public IdempotencyStoreHealthCheck(IdempotencyStore store) {
        this.store = store;
    }

    @Override
    public HealthCheckResponse call() {
        long now = System.nanoTime();
        HealthCheckResponse cached = last;
        if (cached != null && now - lastAt < FRESH_MILLIS * 1_000_000) {
            return cached;
        }
        HealthCheckResponse response = check();
        last = response;
        lastAt = now;
        return response;
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
