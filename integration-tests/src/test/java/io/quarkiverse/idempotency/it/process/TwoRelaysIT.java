package io.quarkiverse.idempotency.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.it.Broker;
import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * Two application processes relay one outbox table that a dead instance left full: between them they send each row
 * exactly once (a row sent by both would count twice in their sent counters, and show downstream as a duplicate). One
 * relay claims at a time, and none claims past a row another is still sending, so that a transaction's messages leave in
 * order: which of the two sends which batches is theirs to settle (often one sends them all).
 */
class TwoRelaysIT {

    static final int ROWS = 6000;

    @Test
    void twoInstancesRelayEachLeftRowOnceBetweenThem() throws Exception {
        // small batches, a short period: the two relays claim side by side for several seconds
        Map<String, String> env = Map.of("QUARKUS_IDEMPOTENCY_OUTBOX_RELAY_EVERY", "1s",
                "QUARKUS_IDEMPOTENCY_OUTBOX_BATCH_SIZE", "50");
        try (Broker broker = new Broker();
                AppProcess a = AppProcess.start("relay-a", Services.with(env));
                AppProcess b = AppProcess.start("relay-b", Services.with(env))) {
            broker.reset();
            Ledger.reset();
            await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers("receipts") >= 2);
            // receipts an earlier test left in the queue are consumed first; copies among them are not this test's
            await().atMost(Duration.ofSeconds(60)).until(() -> broker.ready("receipts") == 0);
            double duplicatesBefore = duplicates(a) + duplicates(b);
            String run = "TR" + UUID.randomUUID().toString().substring(0, 8) + "-";
            // rows of a dead instance, due at once: one statement, so neither relay sees them before the other could
            Ledger.execute("INSERT INTO idempotency_outbox (message_id, channel, message_key, payload_type, payload,"
                    + " lease_owner, lease_until) SELECT '" + run + "' || i, 'receipts-out', '" + run + "' || i,"
                    + " 'json-object', convert_to(json_build_object('orderId', '" + run + "' || i, 'amountCents', i)::text,"
                    + " 'UTF8'), 'a-dead-instance', now() - interval '1 second' FROM generate_series(1, " + ROWS + ") i");

            await().atMost(Duration.ofSeconds(180)).until(() -> Ledger.outboxRows() == 0
                    && Ledger.receipts(run) >= ROWS && broker.ready("receipts") == 0);
            double sentA = a.metric("idempotency_outbox_sent_total", "path=\"relay\"");
            double sentB = b.metric("idempotency_outbox_sent_total", "path=\"relay\"");
            double duplicates = duplicates(a) + duplicates(b) - duplicatesBefore;
            System.out.println("TWO RELAYS: " + ROWS + " rows; relayed A=" + sentA + " B=" + sentB
                    + "; duplicates dropped downstream " + duplicates + "; receipts " + Ledger.receipts(run));
            assertEquals(ROWS, (long) (sentA + sentB), "each row sent once between the two relays");
            assertEquals(0, duplicates, "no copy reached the receipts consumer");
            assertEquals(ROWS, Ledger.receipts(run), "one receipt per row");
            assertEquals(ROWS, Ledger.distinctReceiptIds(run), "each under its row's id");
        }
    }

    private static double duplicates(AppProcess app) throws Exception {
        return app.metric("idempotency_deliveries_total", "outcome=\"duplicate\"", "channel=\"receipts\"");
    }
}
