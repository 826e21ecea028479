package io.quarkiverse.idempotency.reactiveonly;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.KeyFunction;
import io.vertx.core.json.JsonObject;

/** The business key of a payment, its order: the same order published twice, or to both queues, is charged once. */
public class OrderIdKey implements KeyFunction<JsonObject> {

    @Override
    public String key(JsonObject payment, Metadata metadata) {
        Object orderId = payment.getValue("orderId");
        return orderId instanceof String id && !id.isBlank() ? "charge:" + id : null;
    }
}
