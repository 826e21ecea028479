package io.quarkiverse.idempotency.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.it.Broker;
import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * Two application processes consume the same queue, with 30% duplicates (redeliveries and republishes): charges equal
 * distinct orders.
 */
class TwoProcessesIT {

    static final int ORDERS = 700;

    @Test
    void twoProcessesWithThirtyPercentDuplicatesChargeEachOrderOnce() throws Exception {
        Map<String, String> env = Map.of("DEMO_GATEWAY_LATENCY", "10ms");
        try (Broker broker = new Broker();
                AppProcess a = AppProcess.start("two-a", Services.with(env));
                AppProcess b = AppProcess.start("two-b", Services.with(env))) {
            broker.reset();
            Ledger.reset();
            await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers(Broker.QUEUE) >= 2);
            assertEquals(2, broker.consumers(Broker.QUEUE), "these two processes are the only consumers");

            Random random = new Random(7);
            List<String[]> mix = new ArrayList<>();
            List<String[]> originals = new ArrayList<>();
            for (int i = 0; i < ORDERS; i++) {
                String[] m = { UUID.randomUUID().toString(), Broker.payment("T-" + i, 100 + i) };
                mix.add(m);
                originals.add(m);
            }
            int duplicates = ORDERS * 30 / 70; // 30% of everything published
            for (int i = 0; i < duplicates; i++) {
                String[] original = originals.get(random.nextInt(ORDERS));
                // half redeliveries (same message id), half republishes (new message id, same order)
                mix.add(i % 2 == 0 ? original : new String[] { UUID.randomUUID().toString(), original[1] });
            }
            Collections.shuffle(mix, random);
            for (String[] m : mix) {
                broker.publishToQueue(m[0], m[1]);
            }

            await().atMost(Duration.ofSeconds(180)).until(() -> Ledger.distinctChargedOrders() == ORDERS
                    && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0);
            double firstA = a.metric("idempotency_deliveries_total", "outcome=\"handled\"", "channel=\"payments\"");
            double firstB = b.metric("idempotency_deliveries_total", "outcome=\"handled\"", "channel=\"payments\"");
            double dupA = a.metric("idempotency_deliveries_total", "outcome=\"duplicate\"", "channel=\"payments\"");
            double dupB = b.metric("idempotency_deliveries_total", "outcome=\"duplicate\"", "channel=\"payments\"");
            double busy = a.metric("idempotency_deliveries_total", "outcome=\"busy\"")
                    + b.metric("idempotency_deliveries_total", "outcome=\"busy\"");
            System.out.println("TWO PROCESSES: published " + mix.size() + " (" + duplicates + " duplicates) for "
                    + ORDERS + " orders; charges " + Ledger.charges() + "; first deliveries A=" + firstA + " B="
                    + firstB + "; duplicates dropped A=" + dupA + " B=" + dupB + "; busy requeues " + busy);
            assertEquals(ORDERS, Ledger.charges(), "charges == distinct orders");
            assertEquals(ORDERS, (long) (firstA + firstB), "each order handled once across both processes");
            assertTrue(firstA > 0 && firstB > 0, "both processes took part");
            assertEquals(0, broker.ready(Broker.DLQ));
        }
    }
}
