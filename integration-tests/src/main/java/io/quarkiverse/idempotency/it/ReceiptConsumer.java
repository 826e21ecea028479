package io.quarkiverse.idempotency.it;

import java.time.Instant;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.vertx.core.json.JsonObject;

/**
 * Downstream of the outbox: records each receipt once, keyed by its message id (the default key), so that a receipt
 * the outbox sends again (after a crash, with the same id) is dropped as a duplicate.
 */
@ApplicationScoped
public class ReceiptConsumer {

    @Incoming("receipts")
    @Idempotent
    @Blocking(ordered = false)
    @Transactional
    void record(JsonObject receipt, IncomingRabbitMQMetadata metadata) {
        Receipt row = new Receipt();
        row.messageId = metadata.getMessageId().orElse("?");
        row.orderId = receipt.getString("orderId");
        row.messageKey = metadata.getRoutingKey();
        row.amountCents = receipt.getLong("amountCents", 0L);
        row.recordedAt = Instant.now();
        row.persist();
    }
}
