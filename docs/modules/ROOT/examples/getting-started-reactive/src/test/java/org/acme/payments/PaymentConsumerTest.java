package org.acme.payments;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.hibernate.reactive.mutiny.Mutiny;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.MessageIdMetadata;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;
import io.vertx.core.json.JsonObject;

@QuarkusTest
class PaymentConsumerTest {

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Mutiny.SessionFactory sessions;

    @Test
    void threeDeliveriesThreeAcksOneCharge() {
        AtomicInteger acks = new AtomicInteger();
        JsonObject payment = new JsonObject().put("orderId", "A-1").put("amountCents", 1299);
        for (int i = 0; i < 3; i++) {
            connector.source("payments").send(Message.of(payment,
                    Metadata.of(new MessageIdMetadata("m-" + i)), // a new message id each time
                    () -> {
                        acks.incrementAndGet();
                        return CompletableFuture.completedFuture(null);
                    }));
        }
        await().until(() -> acks.get() == 3);
        Long charges = sessions.withSession(session -> session
                .createSelectionQuery("select count(*) from Charge where orderId = 'A-1'", Long.class)
                .getSingleResult()).await().atMost(Duration.ofSeconds(10));
        assertEquals(1, charges);
    }
}
