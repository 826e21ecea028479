package io.quarkiverse.idempotency.reactive;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Outgoing;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ThroughOutbox;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;

/**
 * A Hibernate Reactive processor whose output goes through the outbox: the charge, the key and the receipt it returns
 * are one reactive transaction, and the receipt is sent to the exchange processed-receipts once that committed.
 * {@code {"orderId": "P-1", "amountCents": 1299}}; a test may add {@code "failures"} (the first that many attempts fail
 * after their charge) and {@code "skip": true} (the charge returns no receipt).
 */
@ApplicationScoped
public class ReactiveReceiptProcessor {

    private final Attempts attempts;

    public ReactiveReceiptProcessor(Attempts attempts) {
        this.attempts = attempts;
    }

    @Incoming("processed-payments")
    @Outgoing("processed-receipts")
    @ThroughOutbox
    @Idempotent(key = OrderIdKey.class, scope = "processed")
    @WithTransaction
    public Uni<JsonObject> charge(JsonObject payment) {
        String orderId = payment.getString("orderId");
        int attempt = attempts.started(orderId);
        long amount = payment.getLong("amountCents", 0L);
        return ReactiveCharge.of(orderId, amount, "processed").persist().map(charged -> {
            if (attempt <= payment.getInteger("failures", 0)) {
                throw new IllegalStateException("card declined after the charge, attempt " + attempt);
            }
            return payment.getBoolean("skip", false) ? null
                    : new JsonObject().put("orderId", orderId).put("amountCents", amount).put("attempt", attempt);
        });
    }
}
