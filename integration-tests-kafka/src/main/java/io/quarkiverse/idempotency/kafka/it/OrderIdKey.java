package io.quarkiverse.idempotency.kafka.it;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.KeyFunction;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

/**
 * The business key of a payment record: its order, so that the same order published as two records (two offsets) is
 * charged once. A record that is not a JSON object with an order id has no key: it goes to the dead-letter topic at
 * once, and the partition moves on.
 */
public class OrderIdKey implements KeyFunction<String> {

    @Override
    public String key(String body, Metadata metadata) {
        try {
            Object orderId = new JsonObject(body).getValue("orderId");
            return orderId instanceof String id && !id.isBlank() ? "charge:" + id : null;
        } catch (DecodeException | ClassCastException e) {
            return null;
        }
    }
}
