package io.quarkiverse.idempotency.reactive;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * Charges each payment once through the reactive PostgreSQL client, without a transaction, on the event loop: no
 * {@code @Blocking}, no {@code @WithTransaction}. Its key is claimed on a lease before the charge and confirmed after
 * it, both through the same client, so nothing blocks the event loop. Same scope as the two other consumers: an order
 * delivered to all three is charged once. A test may add {@code "slowMs"} (the charge waits that long, without
 * blocking) or {@code "failures"} (the first that many attempts fail before charging).
 */
@ApplicationScoped
public class LeasePaymentConsumer {

    private final Attempts attempts;
    private final Pool client;

    public LeasePaymentConsumer(Attempts attempts, Pool client) {
        this.attempts = attempts;
        this.client = client;
    }

    @Incoming("lease-payments")
    @Idempotent(key = OrderIdKey.class, scope = "payments")
    public Uni<Void> charge(JsonObject payment) {
        String orderId = payment.getString("orderId");
        int attempt = attempts.started(orderId);
        if (attempt <= payment.getInteger("failures", 0)) {
            return Uni.createFrom().failure(new IllegalStateException("card declined, attempt " + attempt + " of "
                    + orderId));
        }
        Uni<Void> wait = Uni.createFrom().voidItem();
        long slowMs = payment.getLong("slowMs", 0L);
        if (slowMs > 0) {
            wait = wait.onItem().delayIt().by(Duration.ofMillis(slowMs));
        }
        return wait.chain(() -> client.preparedQuery("INSERT INTO charge (order_id, amount_cents, charged_by, charged_at)"
                + " VALUES ($1, $2, 'lease', now())").execute(Tuple.of(orderId, payment.getLong("amountCents", 0L))))
                .replaceWithVoid();
    }
}
