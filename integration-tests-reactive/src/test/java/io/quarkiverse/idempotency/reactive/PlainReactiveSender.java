package io.quarkiverse.idempotency.reactive;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Channel;

import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;

/** A {@code @WithTransaction} method that is not {@code @Idempotent} and sends through the outbox: refused. */
@ApplicationScoped
public class PlainReactiveSender {

    @Inject
    @Channel("reactive-receipts")
    OutboxEmitter<JsonObject> receipts;

    @WithTransaction
    public Uni<Void> chargeAndSend(String orderId) {
        return ReactiveCharge.of(orderId, 1299, "plain").persist()
                .invoke(() -> receipts.send(new JsonObject().put("orderId", orderId))).replaceWithVoid();
    }
}
