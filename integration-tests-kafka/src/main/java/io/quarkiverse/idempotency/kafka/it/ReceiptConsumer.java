package io.quarkiverse.idempotency.kafka.it;

import java.nio.charset.StandardCharsets;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.apache.kafka.common.header.Header;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.vertx.core.json.JsonObject;

/**
 * Downstream of the outbox: records each receipt of the topic {@code receipts} once, keyed by its id (the
 * {@code ce_id} header the outbox gives it, the default key), so that a receipt the outbox sends again is dropped.
 */
@ApplicationScoped
public class ReceiptConsumer {

    @Inject
    EntityManager entities;

    @Incoming("receipts")
    @Idempotent
    @Transactional
    void record(JsonObject receipt, IncomingKafkaRecordMetadata<?, ?> metadata) {
        Header id = metadata.getHeaders().lastHeader("ce_id");
        entities.createNativeQuery("INSERT INTO receipt (message_id, order_id, amount_cents, message_key)"
                + " VALUES (?1, ?2, ?3, ?4)")
                .setParameter(1, id == null ? "?" : new String(id.value(), StandardCharsets.UTF_8))
                .setParameter(2, receipt.getString("orderId"))
                .setParameter(3, receipt.getLong("amountCents", 0L))
                .setParameter(4, metadata.getKey() == null ? null : metadata.getKey().toString())
                .executeUpdate();
    }
}
