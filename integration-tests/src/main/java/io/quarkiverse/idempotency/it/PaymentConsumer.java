package io.quarkiverse.idempotency.it;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.OutboxEmitter;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.vertx.core.json.JsonObject;

/**
 * Charges each payment once, however many times RabbitMQ delivers it: {@code {"orderId": "A-1", "amountCents": 1299}},
 * and sends its receipt through the outbox, in the charge's transaction, to the exchange {@code receipts}.
 */
@ApplicationScoped
public class PaymentConsumer {

    private final PaymentGateway gateway;
    private final OutboxEmitter<JsonObject> receipts;

    @Inject
    public PaymentConsumer(PaymentGateway gateway, @Channel("receipts-out") OutboxEmitter<JsonObject> receipts) {
        this.gateway = gateway;
        this.receipts = receipts;
    }

    @Incoming("payments")
    @Idempotent(key = OrderIdKey.class)
    @Blocking(ordered = false)
    @Transactional
    void charge(JsonObject payment) {
        String orderId = payment.getString("orderId");
        long amountCents = payment.getLong("amountCents", 0L);
        gateway.charge(orderId, amountCents);
        // written in this transaction, sent once it commits: a charge rolled back sends no receipt
        // routed by the order's id (the fanout exchange receipts ignores it; a topic exchange would route on it)
        receipts.send(new JsonObject().put("orderId", orderId).put("amountCents", amountCents), null, orderId);
    }
}
