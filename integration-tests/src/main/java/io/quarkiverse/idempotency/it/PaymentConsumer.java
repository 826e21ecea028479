package io.quarkiverse.idempotency.it;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.vertx.core.json.JsonObject;

/**
 * Charges each payment once, however many times RabbitMQ delivers it: {@code {"orderId": "A-1", "amountCents": 1299}}.
 */
@ApplicationScoped
public class PaymentConsumer {

    private final PaymentGateway gateway;

    @Inject
    public PaymentConsumer(PaymentGateway gateway) {
        this.gateway = gateway;
    }

    @Incoming("payments")
    @Idempotent(key = OrderIdKey.class)
    @Blocking(ordered = false)
    @Transactional
    void charge(JsonObject payment) {
        gateway.charge(payment.getString("orderId"), payment.getLong("amountCents", 0L));
    }
}
