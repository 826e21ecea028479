package io.quarkiverse.idempotency.kafka.it;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.vertx.core.json.JsonObject;

/**
 * Charges each payment of the Kafka topic {@code payments} once, however many times Kafka hands it over (a consumer
 * that died before committing its offset, a rebalance) and however many times it was published (a retrying producer,
 * an outbox): {@code {"orderId": "A-1", "amountCents": 1299}}, read by the connector's JSON deserializer. The charge and
 * the key commit in one transaction.
 */
@ApplicationScoped
public class PaymentConsumer {

    /** A simulated call to the payment provider before the charge is written ({@code demo.gateway.latency}). */
    @ConfigProperty(name = "demo.gateway.latency", defaultValue = "0s")
    Duration latency;

    @Incoming("payments")
    @Idempotent(key = OrderIdKey.class)
    @Transactional
    void charge(JsonObject payment) throws InterruptedException {
        if (!latency.isZero()) {
            Thread.sleep(latency.toMillis());
        }
        Charge.of(payment.getString("orderId"), payment.getLong("amountCents")).persist();
    }
}
