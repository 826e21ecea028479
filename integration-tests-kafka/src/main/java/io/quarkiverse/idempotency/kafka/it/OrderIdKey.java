package io.quarkiverse.idempotency.kafka.it;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.KeyFunction;
import io.vertx.core.json.JsonObject;

/**
 * The business key of a payment record: its order, so that the same order published as two records (two offsets) is
 * charged once. A payment without an order id has no key: it goes to the dead-letter topic at once, and the partition
 * moves on.
 */
public class OrderIdKey implements KeyFunction<JsonObject> {

    @Override
    public String key(JsonObject payment, Metadata metadata) {
        Object orderId = payment.getValue("orderId");
        return orderId instanceof String id && !id.isBlank() ? "charge:" + id : null;
    }
}
