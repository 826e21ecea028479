package io.quarkiverse.idempotency.it;

import java.time.Instant;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.vertx.core.json.JsonObject;

/**
 * Records every payment message once in the audit log. It consumes its own queue bound to the same exchange as the
 * payments consumer, so it sees the same message ids; keyed by message id and scoped by its channel, it runs once per
 * message, independently of the payments consumer.
 */
@ApplicationScoped
public class AuditConsumer {

    @Incoming("payments-audit")
    @Idempotent
    @Transactional
    void record(JsonObject payment) {
        AuditEntry entry = new AuditEntry();
        entry.orderId = payment.getString("orderId");
        entry.recordedAt = Instant.now();
        entry.persist();
    }
}
