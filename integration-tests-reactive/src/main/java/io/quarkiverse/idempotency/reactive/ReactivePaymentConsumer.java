package io.quarkiverse.idempotency.reactive;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;

/**
 * Charges each payment once with Hibernate Reactive, on the event loop: its key is written in the same reactive
 * transaction as the charge. {@code {"orderId": "A-1", "amountCents": 1299}}; a test may add {@code "slowMs"} (the
 * charge's transaction stays open that long, without blocking), {@code "failures"} (the first that many attempts
 * fail after writing their charge) or {@code "swallowSqlError": true} (a statement of the handler's own fails, and the
 * handler catches it).
 */
@ApplicationScoped
public class ReactivePaymentConsumer {

    private final Attempts attempts;

    public ReactivePaymentConsumer(Attempts attempts) {
        this.attempts = attempts;
    }

    @Incoming("reactive-payments")
    @Idempotent(key = OrderIdKey.class, scope = "payments")
    @WithTransaction
    public Uni<Void> charge(JsonObject payment) {
        String orderId = payment.getString("orderId");
        int attempt = attempts.started(orderId);
        Uni<Void> charged = ReactiveCharge.of(orderId, payment.getLong("amountCents", 0L), "reactive").persist()
                .replaceWithVoid();
        long slowMs = payment.getLong("slowMs", 0L);
        if (slowMs > 0) {
            charged = charged.onItem().delayIt().by(Duration.ofMillis(slowMs));
        }
        if (attempt <= payment.getInteger("failures", 0)) {
            return charged.chain(() -> Uni.createFrom()
                    .failure(new IllegalStateException("card declined, attempt " + attempt + " of " + orderId)));
        }
        if (payment.getBoolean("swallowSqlError", false)) {
            return charged.call(() -> ReactiveCharge.getSession()
                    .chain(session -> session.createNativeQuery("SELECT no_such_column FROM charge").getResultList())
                    .onFailure().recoverWithNull());
        }
        return charged;
    }
}
