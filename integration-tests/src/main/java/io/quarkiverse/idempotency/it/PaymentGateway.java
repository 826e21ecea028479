package io.quarkiverse.idempotency.it;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Charges a card. Here the charge is a row in the {@code charge} table, written in the caller's transaction, after a
 * simulated call to the payment provider ({@code demo.gateway.latency}, none by default).
 */
@ApplicationScoped
public class PaymentGateway {

    @ConfigProperty(name = "demo.gateway.latency", defaultValue = "0s")
    Duration latency;

    public void charge(String orderId, long amountCents) {
        if (!latency.isZero()) {
            try {
                Thread.sleep(latency.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while charging " + orderId, e);
            }
        }
        Charge.of(orderId, amountCents).persist();
    }
}
