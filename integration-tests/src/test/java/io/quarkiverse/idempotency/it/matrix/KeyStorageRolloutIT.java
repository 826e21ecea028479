package io.quarkiverse.idempotency.it.matrix;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
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
 * {@code key-storage} changed from readable keys to digests on a running system, as the operations guide says: the new
 * configuration rolled out beside the old one, with {@code key-storage-changed-at} set to an instant after the rollout.
 * An instance of the old configuration and one of the new consume the same queue at once, with redeliveries and
 * republishes of the same orders, each handler holding its transaction (its key inserted, not committed) while the
 * payment provider answers; then the old one stops, a second new one starts, the instant passes, and orders old and new
 * arrive again. Every order is charged once; keys are readable until the instant and digests after it.
 */
class KeyStorageRolloutIT {

    static final int ORDERS = 150;
    static final String SECRET = "the payments' key secret, 32+ characters long";

    @Test
    void oldAndNewConfigurationsSideBySideThenTheSwitchChargeEachOrderOnce() throws Exception {
        Map<String, String> old = Services.with(Map.of("DEMO_GATEWAY_LATENCY", "20ms"));
        Random random = new Random(11);
        // this run's orders only: a message of an earlier run may still wait in a delay queue
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (Broker broker = new Broker()) {
            try (AppProcess setup = AppProcess.start("rollout-setup", old)) {
                broker.reset();
                Ledger.reset();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers(Broker.QUEUE) == 0);
            // the instant is set once the setup ran, so that the side-by-side part has its 75 s however slowly the
            // machine starts processes
            Instant switchAt = Instant.now().plus(Duration.ofSeconds(75));
            Map<String, String> next = new HashMap<>(old);
            next.put("QUARKUS_IDEMPOTENCY_KEY_STORAGE", "digest");
            next.put("QUARKUS_IDEMPOTENCY_KEY_DIGEST_SECRET", SECRET);
            next.put("QUARKUS_IDEMPOTENCY_KEY_STORAGE_CHANGED_AT", switchAt.toString());
            List<String[]> before = orders("R" + run + "-", random);
            try (AppProcess oldOne = AppProcess.start("rollout-old", old);
                    AppProcess newOne = AppProcess.start("rollout-new", next)) {
                publishWithDuplicates(broker, before, random);
                await().atMost(Duration.ofSeconds(120)).until(() -> charged(run) == ORDERS
                        && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0);
                assertEquals(ORDERS, charges(run), "side by side: every order charged once");
                assertEquals(true, Instant.now().isBefore(switchAt), "the first part ran before the instant");
                assertEquals(0, Ledger.count("SELECT count(*) FROM idempotency_record WHERE scope = 'payments'"
                        + " AND scoped_key LIKE 'payments:hmac:%'"), "until the instant, the keys the old ones write");
                try (AppProcess second = AppProcess.start("rollout-new-2", next)) {
                    oldOne.close(); // the rollout completes before the instant
                    await().atMost(Duration.ofSeconds(90)).until(() -> Instant.now().isAfter(switchAt));
                    List<String[]> after = orders("D" + run + "-", random);
                    List<String[]> again = new ArrayList<>(after);
                    again.addAll(before.subList(0, 50)); // orders handled before the switch, republished after it
                    publishWithDuplicates(broker, again, random);
                    await().atMost(Duration.ofSeconds(120)).until(() -> charged(run) == 2 * ORDERS
                            && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0);
                    System.out.println("KEY STORAGE ROLLOUT: " + charges(run) + " charges for " + 2 * ORDERS
                            + " orders; digest keys " + Ledger.count("SELECT count(*) FROM idempotency_record WHERE"
                                    + " scoped_key LIKE 'payments:hmac:%'"));
                    assertEquals(2 * ORDERS, charges(run), "every order charged once, across the switch");
                    assertEquals(0, Ledger.count("SELECT count(*) FROM idempotency_record WHERE scope = 'payments'"
                            + " AND scoped_key LIKE 'payments:charge:D" + run + "-%'"), "after the instant, digests only");
                }
            }
        }
    }

    private static List<String[]> orders(String prefix, Random random) {
        List<String[]> orders = new ArrayList<>();
        for (int i = 0; i < ORDERS; i++) {
            orders.add(new String[] { UUID.randomUUID().toString(), Broker.payment(prefix + i, 100 + i) });
        }
        return orders;
    }

    // each order once, and 40% again: half redeliveries (the same message id), half republishes (a new one); shuffled
    private static void publishWithDuplicates(Broker broker, List<String[]> orders, Random random) {
        List<String[]> mix = new ArrayList<>(orders);
        for (int i = 0; i < orders.size() * 4 / 10; i++) {
            String[] original = orders.get(random.nextInt(orders.size()));
            mix.add(i % 2 == 0 ? original : new String[] { UUID.randomUUID().toString(), original[1] });
        }
        Collections.shuffle(mix, random);
        for (String[] m : mix) {
            broker.publishToQueue(m[0], m[1]);
        }
    }

    private static long charged(String run) {
        return Ledger.count("SELECT count(DISTINCT order_id) FROM charge WHERE order_id LIKE '_" + run + "-%'");
    }

    private static long charges(String run) {
        return Ledger.count("SELECT count(*) FROM charge WHERE order_id LIKE '_" + run + "-%'");
    }
}
