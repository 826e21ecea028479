package org.acme.payments;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.vertx.core.json.JsonObject;

@ApplicationScoped
public class PaymentConsumer {

    @Incoming("payments")
    @Idempotent(key = OrderIdKey.class) // <1>
    @Transactional // <2>
    void charge(JsonObject payment) {
        Charge charge = new Charge();
        charge.orderId = payment.getString("orderId");
        charge.amountCents = payment.getLong("amountCents");
        charge.persist();
    }

    public static class OrderIdKey implements KeyFunction<JsonObject> {

        @Override
        public String key(JsonObject payment, Metadata metadata) {
            String orderId = payment.getString("orderId");
            return orderId == null ? null : "charge:" + orderId; // <3>
        }
    }
}
