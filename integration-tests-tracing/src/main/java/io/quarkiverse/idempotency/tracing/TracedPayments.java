package io.quarkiverse.idempotency.tracing;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.vertx.core.json.JsonObject;

/**
 * Payments charged once: {@code {"orderId": "T-1", "amountCents": 1299}}; a test may add {@code "failures"} (the first
 * that many attempts fail).
 */
@ApplicationScoped
public class TracedPayments {

    private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

    @Incoming("traced-payments")
    @Idempotent
    public void charge(JsonObject payment) {
        String orderId = payment.getString("orderId");
        int attempt = attempts.computeIfAbsent(orderId, id -> new AtomicInteger()).incrementAndGet();
        if (attempt <= payment.getInteger("failures", 0)) {
            throw new IllegalStateException("card declined");
        }
    }

    /** @return how many times the method ran for an order */
    public int attempts(String orderId) {
        AtomicInteger count = attempts.get(orderId);
        return count == null ? 0 : count.get();
    }
}
