package io.quarkiverse.idempotency.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.UUID;

import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;

/**
 * The receipts the payments consumer sends through the outbox, on the real RabbitMQ and PostgreSQL, as the downstream
 * {@code @Idempotent} receipts consumer records them.
 */
@QuarkusTest
class OutboxTest extends BrokerTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    @Channel("receipts-out")
    OutboxEmitter<JsonObject> receipts;

    @Inject
    FlakyGateway gateway;

    @Inject
    Outbox outbox;

    @Test
    void eachChargedOrderSendsOneReceiptUnderOneId() {
        String run = "R" + UUID.randomUUID().toString().substring(0, 8) + "-";
        int orders = 30;
        for (int i = 0; i < orders; i++) {
            String id = UUID.randomUUID().toString();
            broker.publishToQueue(id, Broker.payment(run + i, 100 + i));
            if (i % 3 == 0) {
                broker.publishToQueue(id, Broker.payment(run + i, 100 + i)); // a redelivery: no second receipt
            }
        }
        await().atMost(WAIT).until(() -> Ledger.distinctReceiptOrders(run) == orders && Ledger.outboxRows() == 0);
        assertEquals(orders, Ledger.chargesOfRun(run), "each order charged once");
        assertEquals(orders, Ledger.receipts(run), "one receipt per order");
        assertEquals(orders, Ledger.distinctReceiptIds(run), "each receipt under an id of its own");
        assertEquals(0, Ledger.chargesWithoutOneReceipt());
        assertEquals(0, Ledger.count("SELECT count(*) FROM receipt WHERE order_id LIKE '" + run
                + "%' AND message_key IS DISTINCT FROM order_id"), "each published with its order's id as routing key");
    }

    @Test
    void aChargeThatRollsBackAfterWritingItsReceiptSendsNone() throws Exception {
        String order = "RB-" + UUID.randomUUID().toString().substring(0, 8);
        // a deferred check refuses the charge at the commit, after the receipt's row was written: both roll back
        Ledger.execute("CREATE OR REPLACE FUNCTION refuse_charge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " IF NEW.order_id = '" + order + "' AND EXISTS (SELECT 1 FROM pg_class WHERE relname = 'refusing_"
                + order.toLowerCase().replace('-', '_') + "') THEN RAISE EXCEPTION 'refused'; END IF; RETURN NULL; END $$");
        String flag = "refusing_" + order.toLowerCase().replace('-', '_');
        Ledger.execute("CREATE TABLE " + flag + " ()");
        Ledger.execute("CREATE CONSTRAINT TRIGGER refuse_charge AFTER INSERT ON charge DEFERRABLE INITIALLY DEFERRED"
                + " FOR EACH ROW EXECUTE FUNCTION refuse_charge()");
        try {
            broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment(order, 500));
            // two attempts wrote a receipt and rolled back
            await().atMost(WAIT).until(() -> gateway.calls(order) >= 2);
            Ledger.execute("DROP TABLE " + flag);
            await().atMost(WAIT).until(() -> Ledger.charges(order) == 1 && Ledger.receipts(order) >= 1
                    && Ledger.outboxRows() == 0);
            Thread.sleep(2000); // a receipt of a rolled-back attempt would have another id, and show as a second row
            assertEquals(1, Ledger.receipts(order), "the rolled-back attempts sent no receipt");
        } finally {
            Ledger.execute("DROP TRIGGER IF EXISTS refuse_charge ON charge");
            Ledger.execute("DROP TABLE IF EXISTS " + flag);
        }
    }

    @Test
    void aSendOutsideATransactionIsRefusedAndARolledBackOneSendsNothing() throws Exception {
        String order = "TX-" + UUID.randomUUID().toString().substring(0, 8);
        JsonObject receipt = new JsonObject().put("orderId", order).put("amountCents", 1);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> receipts.send(receipt));
        assertTrue(refused.getMessage().contains("transaction"), refused.getMessage());
        assertThrows(IllegalStateException.class, () -> QuarkusTransaction.requiringNew().run(() -> {
            receipts.send(receipt);
            throw new IllegalStateException("rolled back");
        }));
        assertThrows(IllegalArgumentException.class, () -> QuarkusTransaction.requiringNew()
                .run(() -> receipts.send(receipt, null, " ")), "a blank key");
        String id = QuarkusTransaction.requiringNew().call(() -> receipts.send(receipt, "receipt-" + order));
        assertEquals("receipt-" + order, id);
        await().atMost(WAIT).until(() -> Ledger.receipts(order) == 1 && Ledger.outboxRows() == 0);
        Thread.sleep(1000);
        assertEquals(1, Ledger.receipts(order), "only the committed one was sent");
        assertEquals(1, Ledger.count("SELECT count(*) FROM receipt WHERE message_id = 'receipt-" + order + "'"),
                "under the id it was given");
    }

    @Test
    void rowsADeadInstanceLeftAreRelayedUnderTheirIdsAndKeysAndACopyIsDroppedDownstream() {
        String order = "LEFT-" + UUID.randomUUID().toString().substring(0, 8);
        String payload = new JsonObject().put("orderId", order).put("amountCents", 700).encode();
        // two rows under one id, as after a crash between a send and its row's delete: sent twice, recorded once
        for (int i = 0; i < 2; i++) {
            Ledger.execute("INSERT INTO idempotency_outbox (message_id, channel, message_key, payload_type, payload,"
                    + " lease_owner, lease_until) VALUES ('left-" + order + "', 'receipts-out', 'route-" + order
                    + "', 'json-object', convert_to('" + payload + "', 'UTF8'), 'a-dead-instance', now() - interval"
                    + " '1 second')");
        }
        await().atMost(WAIT).until(() -> Ledger.outboxRows() == 0 && Ledger.receipts(order) == 1);
        assertEquals(1, Ledger.count("SELECT count(*) FROM receipt WHERE message_id = 'left-" + order + "'"));
        assertEquals("route-" + order, Ledger.text("SELECT message_key FROM receipt WHERE order_id = '" + order + "'"),
                "the relay publishes with the row's routing key");
    }

    @Test
    void aRowStillLeasedByItsWriterIsNotRelayed() throws Exception {
        String order = "HELD-" + UUID.randomUUID().toString().substring(0, 8);
        String payload = new JsonObject().put("orderId", order).put("amountCents", 1).encode();
        Ledger.execute("INSERT INTO idempotency_outbox (message_id, channel, payload_type, payload, lease_owner,"
                + " lease_until) VALUES ('held-" + order + "', 'receipts-out', 'json-object', convert_to('" + payload
                + "', 'UTF8'), 'another-instance', now() + interval '8 seconds')");
        long started = outbox.counts().relayRunsStarted();
        await().atMost(WAIT).until(() -> outbox.counts().relayRunsEnded() > started); // a relay run since it was written
        assertEquals(1L, Ledger.count("SELECT count(*) FROM idempotency_outbox WHERE message_id = 'held-" + order
                + "' AND lease_owner = 'another-instance'"), "not claimed by the relay: still its writer's");
        assertEquals(0, Ledger.receipts(order), "its writer may still be sending it");
        await().atMost(WAIT).until(() -> Ledger.receipts(order) == 1 && Ledger.outboxRows() == 0);
    }
}
