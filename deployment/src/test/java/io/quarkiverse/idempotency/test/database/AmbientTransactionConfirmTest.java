package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A lease-mode confirm commits on its own, whatever transaction is around it when the handler acks: a handler that
 * acks inside a transaction that then rolls back has still acked, so its key must be a fact in the store, not a
 * confirm rolled back with someone else's transaction (while this process's cache would answer "duplicate").
 */
class AmbientTransactionConfirmTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "orders" }, Consumer.class);

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumer consumer;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theConfirmDoesNotJoinTheHandlersOwnTransaction() throws SQLException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
        Delivered<String> d = Delivered.withId("a-1", "x");
        connector.source("orders").send(d.message());
        await().atMost(Duration.ofSeconds(10)).until(d::settled);
        assertEquals(1, d.acks());
        assertEquals("CONFIRMED", new Sql(dataSource).query(
                "SELECT state FROM idempotency_record WHERE scoped_key = 'orders:a-1'"),
                "confirmed in the store although the transaction the handler acked in rolled back");
        assertEquals(1, consumer.runs.get());
    }

    @Singleton
    public static class Consumer {
        final AtomicInteger runs = new AtomicInteger();

        @Incoming("orders")
        @Idempotent
        @Blocking
        CompletionStage<Void> handle(Message<String> message) {
            runs.incrementAndGet();
            return QuarkusTransaction.requiringNew().call(() -> {
                CompletionStage<Void> acked = message.ack();
                acked.toCompletableFuture().join();
                QuarkusTransaction.setRollbackOnly();
                return acked;
            });
        }
    }
}
