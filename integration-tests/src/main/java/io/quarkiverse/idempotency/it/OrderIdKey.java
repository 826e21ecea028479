package io.quarkiverse.idempotency.it;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.KeyFunction;
import io.vertx.core.json.JsonObject;

/**
 * The business key of a payment: its order, prefixed, so that the same order published twice under two message ids
 * (a double click, an outbox republish) is charged once. A payment without an order id has no key: dead-lettered.
 */
public class OrderIdKey implements KeyFunction<JsonObject> {

    @Override
    public String key(JsonObject payment, Metadata metadata) {
        Object orderId = payment.getValue("orderId");
        if (!(orderId instanceof String id) || id.isBlank()) {
            return null;
        }
        return "charge:" + id;
    }
}
