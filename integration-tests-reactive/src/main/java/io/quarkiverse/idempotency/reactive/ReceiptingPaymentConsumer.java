package io.quarkiverse.idempotency.reactive;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.hibernate.reactive.mutiny.Mutiny;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;

/**
 * Charges each payment once with Hibernate Reactive and sends its receipt through the outbox: the charge, the key and
 * the receipt are one reactive transaction. {@code {"orderId": "R-1", "amountCents": 1299}}; a test may add
 * {@code "failures"} (the first that many attempts fail after sending their receipt, so their transaction rolls back),
 * {@code "markForRollback"} (the first that many attempts mark their transaction for rollback after sending their
 * receipt, and return normally) and {@code "receipts"} (how many receipts each attempt sends, 1 unless said).
 */
@ApplicationScoped
public class ReceiptingPaymentConsumer {

    private final Attempts attempts;
    private final OutboxEmitter<JsonObject> receipts;

    public ReceiptingPaymentConsumer(Attempts attempts, @Channel("reactive-receipts") OutboxEmitter<JsonObject> receipts) {
        this.attempts = attempts;
        this.receipts = receipts;
    }

    @Incoming("receipted-payments")
    @Idempotent(key = OrderIdKey.class, scope = "receipted")
    @WithTransaction
    public Uni<Void> charge(JsonObject payment) {
        String orderId = payment.getString("orderId");
        int attempt = attempts.started(orderId);
        long amount = payment.getLong("amountCents", 0L);
        Uni<Void> charged = ReactiveCharge.of(orderId, amount, "receipted").persist().invoke(() -> {
            // sent after a statement of the transaction, on the message's context, as a handler would
            for (int i = 1; i <= payment.getInteger("receipts", 1); i++) {
                receipts.send(new JsonObject().put("orderId", orderId).put("amountCents", amount).put("n", i));
            }
            if (attempt <= payment.getInteger("failures", 0)) {
                throw new IllegalStateException("card declined after the receipt was sent, attempt " + attempt);
            }
        }).replaceWithVoid();
        if (attempt <= payment.getInteger("markForRollback", 0)) {
            charged = charged.call(() -> Panache.currentTransaction().invoke(Mutiny.Transaction::markForRollback));
        }
        return charged;
    }
}
