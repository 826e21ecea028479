package io.quarkiverse.idempotency.reactive;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.vertx.core.json.JsonObject;

/**
 * The same payments, consumed from a second queue by a blocking consumer with Hibernate ORM and JTA, under the same
 * scope: an order delivered to both consumers, at once or one after the other, is charged once.
 */
@ApplicationScoped
public class BlockingPaymentConsumer {

    private final EntityManager entities;

    public BlockingPaymentConsumer(EntityManager entities) {
        this.entities = entities;
    }

    @Incoming("blocking-payments")
    @Idempotent(key = OrderIdKey.class, scope = "payments")
    @Blocking(ordered = false)
    @Transactional
    void charge(JsonObject payment) {
        entities.createNativeQuery("INSERT INTO charge (order_id, amount_cents, charged_by, charged_at)"
                + " VALUES (?1, ?2, 'blocking', now())").setParameter(1, payment.getString("orderId"))
                .setParameter(2, payment.getLong("amountCents", 0L)).executeUpdate();
    }
}
