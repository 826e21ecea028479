package io.quarkiverse.idempotency.it;

import java.time.Duration;
import java.time.Instant;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.vertx.core.json.JsonObject;

/**
 * Records every payment message once in the audit log. It consumes its own queue bound to the same exchange as the
 * payments consumer, so it sees the same message ids; keyed by message id and scoped by its channel, it runs once per
 * message, independently of the payments consumer.
 * <p>
 * Unlike the payments consumer it is not {@code @Transactional}: it stands for a handler whose work is not in the
 * keys' transaction (a call to another service), so its keys are claimed on a lease before it runs and confirmed after
 * (lease mode). A process killed mid-message leaves claims that the next delivery takes over once their lease ran out;
 * work that was done but not yet confirmed at the kill runs again.
 */
@ApplicationScoped
public class AuditConsumer {

    @ConfigProperty(name = "demo.audit.latency", defaultValue = "0s")
    Duration latency;

    @Incoming("payments-audit")
    @Idempotent
    void record(JsonObject payment) throws InterruptedException {
        if (!latency.isZero()) {
            Thread.sleep(latency.toMillis());
        }
        QuarkusTransaction.requiringNew().run(() -> {
            AuditEntry entry = new AuditEntry();
            entry.orderId = payment.getString("orderId");
            entry.recordedAt = Instant.now();
            entry.persist();
        });
    }
}
