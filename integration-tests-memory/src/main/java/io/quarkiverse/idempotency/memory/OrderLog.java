package io.quarkiverse.idempotency.memory;

import java.util.concurrent.atomic.AtomicLong;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;

/**
 * An application without Hibernate ORM, so with the memory store: each order of the RabbitMQ queue {@code orders}
 * counted once, keyed by its order id ({@code "A-1;..."}); the count is a gauge, {@code orders.logged}.
 */
@ApplicationScoped
public class OrderLog {

    private final AtomicLong logged;

    public OrderLog(MeterRegistry registry) {
        this.logged = registry.gauge("orders.logged", new AtomicLong());
    }

    @Incoming("orders")
    @Idempotent(key = OrderKey.class)
    void log(String order) {
        logged.incrementAndGet();
    }

    /** The order id, before the first {@code ;}; none (dead-lettered) when the body has none. */
    public static class OrderKey implements KeyFunction<String> {
        @Override
        public String key(String order, Metadata metadata) {
            int end = order.indexOf(';');
            return end <= 0 ? null : "order:" + order.substring(0, end);
        }
    }
}
