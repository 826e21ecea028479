package io.quarkiverse.idempotency.reactiveonly;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * Two consumers of the same payments under one scope, in an application without JDBC: one in a Hibernate Reactive
 * transaction (its key written there), one on the event loop without a transaction (its key claimed and confirmed
 * through the reactive client). {@code {"orderId": "A-1", "amountCents": 1299}}; a test may add {@code "slowMs"} (the
 * charge waits that long, without blocking) or {@code "failures"} (the first that many attempts fail). Created at
 * startup: created lazily, the first messages on two event loops at once made one loop wait for the other's creation
 * of the bean (and of the client's pool), which the test's blocked-loop check rightly counts as a wait.
 */
@Startup
@ApplicationScoped
public class PaymentConsumers {

    private final Attempts attempts;
    private final Pool client;

    public PaymentConsumers(Attempts attempts, Pool client) {
        this.attempts = attempts;
        this.client = client;
    }

    @Incoming("transactional-payments")
    @Idempotent(key = OrderIdKey.class, scope = "payments")
    @WithTransaction
    public Uni<Void> chargeInTransaction(JsonObject payment) {
        String orderId = payment.getString("orderId");
        int attempt = attempts.started(orderId);
        Uni<Void> charged = Charge.of(orderId, payment.getLong("amountCents", 0L), "transaction").persist()
                .replaceWithVoid();
        if (attempt <= payment.getInteger("failures", 0)) {
            return charged.chain(() -> Uni.createFrom().failure(new IllegalStateException("card declined")));
        }
        return slowly(payment, charged);
    }

    @Incoming("event-loop-payments")
    @Idempotent(key = OrderIdKey.class, scope = "payments")
    public Uni<Void> chargeWithoutTransaction(JsonObject payment) {
        String orderId = payment.getString("orderId");
        int attempt = attempts.started(orderId);
        if (attempt <= payment.getInteger("failures", 0)) {
            return Uni.createFrom().failure(new IllegalStateException("card declined"));
        }
        return slowly(payment, client.preparedQuery("INSERT INTO charge (order_id, amount_cents, charged_by, charged_at)"
                + " VALUES ($1, $2, 'event-loop', now())").execute(Tuple.of(orderId, payment.getLong("amountCents", 0L)))
                .replaceWithVoid());
    }

    private static Uni<Void> slowly(JsonObject payment, Uni<Void> charge) {
        long slowMs = payment.getLong("slowMs", 0L);
        return slowMs > 0 ? Uni.createFrom().voidItem().onItem().delayIt().by(Duration.ofMillis(slowMs)).chain(() -> charge)
                : charge;
    }
}
