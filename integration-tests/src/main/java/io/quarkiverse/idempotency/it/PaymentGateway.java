package io.quarkiverse.idempotency.it;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * Charges a card. Here the charge is a row in the {@code charge} table, written in the caller's transaction.
 */
@ApplicationScoped
public class PaymentGateway {

    public void charge(String orderId, long amountCents) {
        Charge.of(orderId, amountCents).persist();
    }
}
