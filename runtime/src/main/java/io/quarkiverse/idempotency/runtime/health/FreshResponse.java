package io.quarkiverse.idempotency.runtime.health;

import java.util.function.Supplier;

import org.eclipse.microprofile.health.HealthCheckResponse;

/**
 * A health check's last response, reused for {@value #FRESH_MILLIS} ms: what it asks (the database) is asked at most
 * that often, however often the probe is called.
 */
final class FreshResponse {

    static final long FRESH_MILLIS = 2_000;

    private final Supplier<HealthCheckResponse> check;
    private volatile HealthCheckResponse last;
    private volatile long lastAt;

    FreshResponse(Supplier<HealthCheckResponse> check) {
        this.check = check;
    }

    HealthCheckResponse get() {
        long now = System.nanoTime();
        HealthCheckResponse cached = last;
        if (cached != null && now - lastAt < FRESH_MILLIS * 1_000_000) {
            return cached;
        }
        HealthCheckResponse response = check.get();
        last = response;
        lastAt = now;
        return response;
    }
}
