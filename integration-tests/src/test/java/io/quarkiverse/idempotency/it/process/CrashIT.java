package io.quarkiverse.idempotency.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

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

/**
 * The packaged application is killed with SIGKILL while it is charging, three times at different points, and
 * restarted: every payment is charged exactly once, the queue ends empty, and only the keyless payments are
 * dead-lettered. The dead processes' claims are taken over after the (short) claim timeout.
 */
class CrashIT {

    static final int ORDERS = 300;
    static final int KEYLESS = 5;
    static final Map<String, String> ENV = Map.of(
            "QUARKUS_IDEMPOTENCY_CLAIM_TIMEOUT", "3s",
            "QUARKUS_IDEMPOTENCY_RETRY_DELAY", "300ms",
            // the payment provider takes a while, so that kills land in the middle of charges
            "DEMO_GATEWAY_LATENCY", "150ms");

    @Test
    void killedThreeTimesWhileChargingEveryPaymentIsChargedExactlyOnce() throws Exception {
        List<String> messages = new ArrayList<>();
        try (Broker broker = new Broker()) {
            // A first start declares the queues; the payments are published while no consumer runs.
            try (AppProcess setup = AppProcess.start("crash-setup", ENV)) {
                broker.reset();
                Ledger.reset();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers(Broker.QUEUE) == 0);
            publishMix(broker, messages);

            AppProcess running = AppProcess.start("crash-0", ENV);
            List<String> report = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                // kill once this process has charged a few more, with a full window of payments in flight
                long target = Ledger.charges() + 30 + 20 * i;
                await().atMost(Duration.ofSeconds(120)).until(() -> Ledger.charges() >= target);
                assertEquals(1, broker.consumers(Broker.QUEUE), "this process is the only consumer");
                running.kill();
                report.add("kill " + (i + 1) + " (" + running + ") at " + Ledger.charges() + " charges with "
                        + Ledger.claims() + " claims left behind");
                running = AppProcess.start("crash-" + (i + 1), ENV);
            }
            try (AppProcess last = running) {
                await().atMost(Duration.ofSeconds(180)).until(() -> Ledger.distinctChargedOrders() == ORDERS
                        && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0
                        && broker.ready(Broker.DLQ) == KEYLESS);
                double takeovers = last.metric("idempotency_deliveries_total", "outcome=\"takeover\"",
                        "channel=\"payments\"");
                report.add("published " + messages.size() + " messages for " + ORDERS + " orders; charges "
                        + Ledger.charges() + "; dead-lettered " + broker.ready(Broker.DLQ)
                        + "; takeovers by the last process " + takeovers);
                System.out.println("CRASH TEST: " + String.join("; ", report));
            }
            assertEquals(ORDERS, Ledger.charges(), "every payment charged exactly once");
            assertEquals(KEYLESS, broker.ready(Broker.DLQ), "only the keyless payments were dead-lettered");
        }
    }

    // Every order once, 20% of them published again under the same message id (a redelivery) and 10% under a new
    // one (a republish), plus a few payments without an order id; shuffled.
    static void publishMix(Broker broker, List<String> messages) {
        Random random = new Random(42);
        List<String[]> mix = new ArrayList<>();
        for (int i = 0; i < ORDERS; i++) {
            String id = UUID.randomUUID().toString();
            String body = Broker.payment("C-" + i, 100 + i);
            mix.add(new String[] { id, body });
            if (random.nextInt(100) < 20) {
                mix.add(new String[] { id, body });
            }
            if (random.nextInt(100) < 10) {
                mix.add(new String[] { UUID.randomUUID().toString(), body });
            }
        }
        for (int i = 0; i < KEYLESS; i++) {
            mix.add(new String[] { UUID.randomUUID().toString(), Broker.payment(null, 1) });
        }
        Collections.shuffle(mix, random);
        for (String[] m : mix) {
            broker.publishToQueue(m[0], m[1]);
            messages.add(m[0]);
        }
    }
}
