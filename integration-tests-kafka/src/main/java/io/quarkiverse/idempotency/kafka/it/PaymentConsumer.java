package io.quarkiverse.idempotency.kafka.it;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.OutboxEmitter;
import io.vertx.core.json.JsonObject;

/**
 * Charges each payment of the Kafka topic {@code payments} once, however many times Kafka hands it over (a consumer
 * that died before committing its offset, a rebalance) and however many times it was published (a retrying producer,
 * an outbox): {@code {"orderId": "A-1", "amountCents": 1299}}, read by the connector's JSON deserializer. The charge and
 * the key commit in one transaction, with the charge's receipt, sent through the outbox to the topic {@code receipts}.
 */
@ApplicationScoped
public class PaymentConsumer {

    /** A simulated call to the payment provider before the charge is written ({@code demo.gateway.latency}). */
    @ConfigProperty(name = "demo.gateway.latency", defaultValue = "0s")
    Duration latency;

    /** Each charge's receipt, written in the charge's transaction and sent to the topic receipts once it commits. */
    @Inject
    @Channel("receipts-out")
    OutboxEmitter<JsonObject> receipts;

    @Incoming("payments")
    @Idempotent(key = OrderIdKey.class)
    @Transactional
    void charge(JsonObject payment) throws InterruptedException {
        if (!latency.isZero()) {
            Thread.sleep(latency.toMillis());
        }
        Charge.of(payment.getString("orderId"), payment.getLong("amountCents")).persist();
        // keyed by the order: an order's messages go to one partition, in the order they were sent
        receipts.send(new JsonObject().put("orderId", payment.getString("orderId"))
                .put("amountCents", payment.getLong("amountCents")), null, payment.getString("orderId"));
    }
}
