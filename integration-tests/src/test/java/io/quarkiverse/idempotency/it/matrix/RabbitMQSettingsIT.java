package io.quarkiverse.idempotency.it.matrix;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.UUID;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.it.Broker;
import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * The configuration matrix on RabbitMQ: the packaged demo application (a {@code @Transactional}, unordered blocking
 * consumer) under each setting users change on day one, with the same scenario: payments with redeliveries and
 * republishes, a few without an order id, one poison payment, and the process killed with SIGKILL mid-stream and
 * restarted. Under every setting: each order charged once, the poison payment dead-lettered after its budget, the
 * keyless ones at once, nothing left in the queue and no claim behind. The defaults are {@code CrashIT}'s; the process
 * tests run against the native executable too, these settings only in the JVM (they change configuration, not code).
 */
class RabbitMQSettingsIT {

    static final int ORDERS = 120;
    static final int KEYLESS = 3;
    static final String POISON = "P-" + "9".repeat(300); // longer than charge.order_id: the insert always fails

    enum Setting {
        /** SmallRye's way to consume a queue with more threads: two copies of the channel, payments$1 and payments$2 */
        CONCURRENCY_2(Broker.QUEUE, Map.of("MP_MESSAGING_INCOMING_PAYMENTS_CONCURRENCY", "2")),
        /** one message at a time: a message waiting for its retry holds the only slot, so it goes to the queue's tail */
        PREFETCH_1(Broker.QUEUE, Map.of("MP_MESSAGING_INCOMING_PAYMENTS_MAX_OUTSTANDING_MESSAGES", "1")),
        /**
         * a quorum queue that drops or dead-letters a message returned twice: the retries and waits must not spend
         * it, only the kill may
         */
        QUORUM_DELIVERY_LIMIT_2("payments.quorum", Map.of(
                "MP_MESSAGING_INCOMING_PAYMENTS_QUEUE_NAME", "payments.quorum",
                "MP_MESSAGING_INCOMING_PAYMENTS_EXCHANGE_NAME", "payments.quorum",
                "MP_MESSAGING_INCOMING_PAYMENTS_QUEUE_X_QUEUE_TYPE", "quorum",
                "MP_MESSAGING_INCOMING_PAYMENTS_QUEUE_X_DELIVERY_LIMIT", "2"));

        final String queue;
        final Map<String, String> env;

        Setting(String queue, Map<String, String> env) {
            this.queue = queue;
            this.env = env;
        }

        Map<String, String> environment() {
            Map<String, String> all = new HashMap<>(env);
            all.put("DEMO_GATEWAY_LATENCY", "30ms"); // so that the kill lands mid-charge
            all.put("QUARKUS_IDEMPOTENCY_RETRY_INITIAL_DELAY", "100ms"); // the poison's five attempts within seconds
            return Services.with(all);
        }
    }

    @ParameterizedTest
    @EnumSource(Setting.class)
    void everyOrderChargedOncePoisonDeadLetteredOnceAfterAKill(Setting setting) throws Exception {
        try (Broker broker = new Broker(setting.queue)) {
            try {
                run(setting, broker);
            } finally {
                if (!setting.queue.equals(Broker.QUEUE)) {
                    broker.delete(setting.queue);
                    broker.delete(setting.queue + ".dlq");
                }
            }
        }
    }

    private static void run(Setting setting, Broker broker) throws Exception {
        try (AppProcess setup = AppProcess.start("settings-setup-" + setting, setting.environment())) {
            broker.reset(); // declared by the application: emptied before it stops
            Ledger.reset();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers(setting.queue) == 0);
        // this run's orders: a message an earlier test left in a queue (or waiting in its wait queue) may still come
        String run = "S" + Long.toString(System.nanoTime(), 36) + "-";
        List<String> expectedDead = publish(broker, run);
        AppProcess running = AppProcess.start("settings-" + setting, setting.environment());
        try {
            await().atMost(Duration.ofSeconds(90)).until(() -> Ledger.distinctChargedOrders(run) >= ORDERS / 3);
            running.kill();
            assertTrue(Ledger.distinctChargedOrders(run) < ORDERS, "killed mid-stream");
            running = AppProcess.start("settings-" + setting + "-restarted", setting.environment());
            Map<String, GetResponse> dead = new HashMap<>();
            List<String> deadLetters = new ArrayList<>();
            try {
                await().atMost(Duration.ofSeconds(90)).until(() -> {
                    for (GetResponse r = broker.nextDeadLetter(); r != null; r = broker.nextDeadLetter()) {
                        dead.put(r.getProps().getMessageId(), r);
                        deadLetters.add(r.getProps().getMessageId());
                    }
                    return Ledger.distinctChargedOrders(run) == ORDERS && dead.size() == expectedDead.size()
                            && broker.ready(setting.queue) == 0 && Ledger.claims() == 0;
                });
            } catch (ConditionTimeoutException e) {
                throw new AssertionError(setting + ": " + Ledger.distinctChargedOrders(run) + " of " + ORDERS
                        + " orders charged, dead letters " + dead.keySet() + " (expected " + expectedDead + "), "
                        + broker.ready(setting.queue) + " ready, " + Ledger.claims() + " claims", e);
            }
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> {
                for (GetResponse r = broker.nextDeadLetter(); r != null; r = broker.nextDeadLetter()) {
                    deadLetters.add(r.getProps().getMessageId());
                }
                return broker.ready(setting.queue) == 0;
            });
            assertEquals(ORDERS, Ledger.chargesOfRun(run), setting + ": every order charged exactly once");
            assertEquals(new TreeSet<>(expectedDead), new TreeSet<>(dead.keySet()), setting + ": dead letters");
            GetResponse poison = dead.get("poison");
            assertEquals("dead-lettered", header(poison, "x-idempotency-outcome"));
            assertEquals("5", header(poison, "x-idempotency-attempts"), setting + ": after its whole budget");
            // a kill between a dead letter's confirm and its message's ack repeats that dead letter, no more
            assertTrue(deadLetters.size() <= expectedDead.size() + 1, setting + ": dead letters " + deadLetters);
            System.out.println("SETTINGS " + setting + ": " + ORDERS + " orders charged once; dead letters "
                    + deadLetters.size() + " (" + expectedDead.size() + " payments)");
        } finally {
            running.close();
        }
    }

    // every order once, 20% again under the same message id, 10% under a new one; keyless payments; one poison
    private static List<String> publish(Broker broker, String run) {
        Random random = new Random(7);
        List<String[]> mix = new ArrayList<>();
        for (int i = 0; i < ORDERS; i++) {
            String id = UUID.randomUUID().toString();
            String body = Broker.payment(run + i, 100 + i);
            mix.add(new String[] { id, body });
            if (random.nextInt(100) < 20) {
                mix.add(new String[] { id, body });
            }
            if (random.nextInt(100) < 10) {
                mix.add(new String[] { UUID.randomUUID().toString(), body });
            }
        }
        List<String> dead = new ArrayList<>();
        for (int i = 0; i < KEYLESS; i++) {
            dead.add("keyless-" + i);
            mix.add(new String[] { dead.get(i), Broker.payment(null, 1) });
        }
        dead.add("poison");
        mix.add(new String[] { "poison", Broker.payment(POISON, 1) });
        Collections.shuffle(mix, random);
        for (String[] m : mix) {
            broker.publishToQueue(m[0], m[1]);
        }
        return dead;
    }

    private static String header(GetResponse r, String name) {
        Object value = r.getProps().getHeaders().get(name);
        return value == null ? null : value.toString();
    }
}
