package org.acme.payments;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;

@ApplicationScoped
public class PaymentConsumer {

    @Incoming("payments")
    @Idempotent(key = OrderIdKey.class) // <1>
    @WithTransaction // <2>
    public Uni<Void> charge(JsonObject payment) { // <3>
        Charge charge = new Charge();
        charge.orderId = payment.getString("orderId");
        charge.amountCents = payment.getLong("amountCents");
        return charge.persist().replaceWithVoid();
    }

    public static class OrderIdKey implements KeyFunction<JsonObject> {

        @Override
        public String key(JsonObject payment, Metadata metadata) {
            String orderId = payment.getString("orderId");
            return orderId == null ? null : "charge:" + orderId; // <4>
        }
    }
}
