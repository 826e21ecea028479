package io.quarkiverse.idempotency.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

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
            readyForRows(broker);
            double duplicatesBefore = duplicates(a) + duplicates(b);
            String run = leaveRows("TR", ROWS);

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

    @Test
    void whenTheRelayingInstanceIsKilledTheOtherSendsTheRest() throws Exception {
        // a short lease: the rows the killed relay was sending wait for it before the other instance takes them
        Map<String, String> env = Map.of("QUARKUS_IDEMPOTENCY_OUTBOX_RELAY_EVERY", "1s",
                "QUARKUS_IDEMPOTENCY_OUTBOX_BATCH_SIZE", "50", "QUARKUS_IDEMPOTENCY_OUTBOX_LEASE", "4s");
        int rows = 3000;
        try (Broker broker = new Broker();
                AppProcess a = AppProcess.start("relay-kill-a", Services.with(env));
                AppProcess b = AppProcess.start("relay-kill-b", Services.with(env))) {
            readyForRows(broker);
            String run = leaveRows("TK", rows);
            // once a fifth is sent, the instance holding a live lease on a row (its relay is sending a batch) is killed
            AtomicReference<AppProcess> relaying = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).until(
                    () -> Ledger.outboxRows() <= rows * 4 / 5 && relaying.updateAndGet(x -> sending(a, b)) != null);
            AppProcess killed = relaying.get();
            AppProcess other = killed == a ? b : a;
            killed.kill();
            long leftAtKill = Ledger.outboxRows();
            long killedAt = System.nanoTime();

            await().atMost(Duration.ofSeconds(120)).until(() -> Ledger.outboxRows() == 0
                    && Ledger.receipts(run) >= rows && broker.ready("receipts") == 0);
            long millis = (System.nanoTime() - killedAt) / 1_000_000;
            double relayedByOther = other.metric("idempotency_outbox_sent_total", "path=\"relay\"");
            System.out.println("TWO RELAYS, ONE KILLED: " + rows + " rows; " + leftAtKill + " left at the kill, sent by the"
                    + " other instance in " + millis + " ms (it relayed " + relayedByOther + " in all); receipts "
                    + Ledger.receipts(run));
            assertTrue(leftAtKill > 0, "killed while rows were left");
            assertTrue(millis < 60_000, "the rest sent within a minute of the kill (a lease of 4 s), not " + millis + " ms");
            assertEquals(rows, Ledger.receipts(run), "one receipt per row, whatever the kill interrupted");
            assertEquals(rows, Ledger.distinctReceiptIds(run), "each under its row's id");
        }
    }

    /** Empties the queues and the ledger once both instances consume the receipts. */
    private static void readyForRows(Broker broker) {
        broker.reset();
        Ledger.reset();
        await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers("receipts") >= 2);
        // receipts an earlier test left in the queue are consumed first; copies among them are not this test's
        await().atMost(Duration.ofSeconds(60)).until(() -> broker.ready("receipts") == 0);
    }

    /**
     * Leaves rows of a dead instance in the outbox, due at once: one statement, so neither relay sees them before the
     * other could.
     *
     * @return the prefix of their ids and orders
     */
    private static String leaveRows(String prefix, int rows) {
        String run = prefix + UUID.randomUUID().toString().substring(0, 8) + "-";
        Ledger.execute("INSERT INTO idempotency_outbox (message_id, channel, message_key, payload_type, payload,"
                + " lease_owner, lease_until) SELECT '" + run + "' || i, 'receipts-out', '" + run + "' || i,"
                + " 'json-object', convert_to(json_build_object('orderId', '" + run + "' || i, 'amountCents', i)::text,"
                + " 'UTF8'), 'a-dead-instance', now() - interval '1 second' FROM generate_series(1, " + rows + ") i");
        return run;
    }

    /** @return the process whose relay holds a live lease on a row now, or {@code null} */
    private static AppProcess sending(AppProcess a, AppProcess b) {
        String owner = Ledger.text("SELECT coalesce(min(lease_owner), '') FROM idempotency_outbox WHERE lease_until > now()"
                + " AND lease_owner <> 'a-dead-instance'");
        for (AppProcess app : new AppProcess[] { a, b }) {
            if (owner.contains(":" + app.pid() + ":")) {
                return app;
            }
        }
        return null;
    }

    private static double duplicates(AppProcess app) throws Exception {
        return app.metric("idempotency_deliveries_total", "outcome=\"duplicate\"", "channel=\"receipts\"");
    }
}
