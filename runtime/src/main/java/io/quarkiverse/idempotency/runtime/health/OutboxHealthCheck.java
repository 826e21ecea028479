package io.quarkiverse.idempotency.runtime.health;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkiverse.idempotency.runtime.outbox.OutboxBacklog;

/**
 * Readiness: the outbox's oldest message has waited less than {@code quarkus.idempotency.outbox.ready-within} (else
 * the broker refuses them, or no relay runs). Registered with SmallRye Health and an {@code OutboxEmitter}. Reads the
 * table at most once per 2 s.
 */
@Readiness
@ApplicationScoped
public class OutboxHealthCheck implements HealthCheck {

    private final Outbox outbox;
    private final Duration readyWithin;
    private final FreshResponse fresh = new FreshResponse(this::check);

    @Inject
    public OutboxHealthCheck(Outbox outbox, IdempotencyConfig config) {
        this.outbox = outbox;
        this.readyWithin = config.outbox().readyWithin();
    }

    @Override
    public HealthCheckResponse call() {
        return fresh.get();
    }

    private HealthCheckResponse check() {
        var response = HealthCheckResponse.named("Idempotency outbox");
        try {
            OutboxBacklog backlog = outbox.backlog();
            response.withData("waiting", backlog.waiting()).withData("oldest-seconds", backlog.oldest().toSeconds())
                    .withData("failing", backlog.failing());
            return backlog.oldest().compareTo(readyWithin) > 0 ? response.down().build() : response.up().build();
        } catch (RuntimeException e) {
            return response.down().withData("error", e.getMessage() == null ? e.toString() : e.getMessage()).build();
        }
    }
}
