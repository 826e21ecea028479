package io.quarkiverse.idempotency.kafka.it;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Outgoing;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ThroughOutbox;
import io.vertx.core.json.JsonObject;

/**
 * Refunds from the Kafka topic {@code refunds}, each once, by a processor whose output goes through the outbox: the
 * refund (a row of {@code event_log}) and its notice, returned to the topic {@code refund-notices}, are one
 * transaction with the key, and the notice is sent once that committed, with a {@code ce_id} fixed when it was
 * written. {@code {"orderId": "K-1", "amountCents": 1299}}.
 */
@ApplicationScoped
public class Refunds {

    @Inject
    EntityManager entityManager;

    @Incoming("refunds")
    @Outgoing("refund-notices-out")
    @ThroughOutbox
    @Idempotent(key = OrderIdKey.class)
    @Transactional
    public JsonObject refund(JsonObject refund) {
        String orderId = refund.getString("orderId");
        entityManager.createNativeQuery("INSERT INTO event_log (payload) VALUES (?1)")
                .setParameter(1, "refund " + orderId).executeUpdate();
        return new JsonObject().put("orderId", orderId).put("refundedCents", refund.getLong("amountCents", 0L));
    }
}
