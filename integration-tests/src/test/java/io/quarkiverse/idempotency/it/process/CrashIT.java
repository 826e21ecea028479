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
import java.util.TreeSet;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.it.Broker;
import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * The packaged application, with the extension's default settings, is killed with SIGKILL while it is charging, three
 * times at different points, and restarted: every payment is charged exactly once, the queue ends empty, and only the
 * keyless payments are dead-lettered. Its handler is {@code @Transactional}, so its keys are written in its
 * transactions: a kill leaves no claim behind, nothing is taken over, and the payments in flight at a kill are charged
 * within seconds of the restart, not after a claim timeout. Each charge sends a receipt through the outbox: every
 * charged order's receipt is recorded exactly once downstream, whatever a kill interrupted.
 */
class CrashIT {

    static final int ORDERS = 600;
    /** The prefix of this test's orders: only they are counted, whatever a test before left to charge. */
    static final String RUN = "C-";
    static final int KEYLESS = 5;
    /**
     * The bound on recovery, from a restarted process ready until it charged the next 40 payments (those in flight at
     * the kill among them): seconds, on a busy 2-core machine, where a claim left behind would have cost its whole
     * timeout (five minutes before leases).
     */
    static final Duration RECOVERY = Duration.ofSeconds(30);
    /**
     * No extension setting: the defaults. The payment provider takes a while, so that kills land mid-charge: 32
     * payments at once (the channel's max-outstanding-messages) at 300 ms each is about 100 orders a second, so that a
     * quarter of the orders takes the native executable more than a second, and the test sees the moment to kill
     * (150 ms let it charge all 600 in three seconds: a CI run saw the last quarter go by between two looks).
     */
    static final Map<String, String> ENV = Map.of("DEMO_GATEWAY_LATENCY", "300ms");

    @Test
    void killedThreeTimesWhileChargingEveryPaymentIsChargedExactlyOnce() throws Exception {
        List<String> messages = new ArrayList<>();
        try (Broker broker = new Broker()) {
            // A first start declares the queues; the payments are published while no consumer runs.
            try (AppProcess setup = AppProcess.start("crash-setup", Services.with(ENV))) {
                broker.reset();
                Ledger.reset();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers(Broker.QUEUE) == 0);
            List<String> keyless = publishMix(broker, messages);

            AppProcess running = AppProcess.start("crash-0", Services.with(ENV));
            List<String> report = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    // kill at a quarter, half and three quarters of the orders, with a full window of payments in flight
                    long target = (i + 1) * ORDERS / 4;
                    // and once the messages redelivered after the previous kill are handled: a message the broker
                    // says it delivered before is claimed on a lease (its attempt may have killed a process), so a
                    // kill while it runs leaves that claim, by design; first deliveries leave none
                    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(10))
                            .until(() -> Ledger.distinctChargedOrders(RUN) >= target && Ledger.claims() == 0);
                    assertEquals(1, broker.consumers(Broker.QUEUE), "this process is the only consumer");
                    running.kill();
                    long chargedAtKill = Ledger.distinctChargedOrders(RUN);
                    assertTrue(chargedAtKill < ORDERS, "killed mid-stream, not after the last payment");
                    assertEquals(0, Ledger.claims(), "a kill leaves no claim behind");
                    running = AppProcess.start("crash-" + (i + 1), Services.with(ENV));
                    // The payments that were in flight went back to the queue with the dead connection: the new process
                    // charges them, and more, at once.
                    long ready = System.nanoTime();
                    long next = Math.min(ORDERS, chargedAtKill + 40);
                    await().atMost(RECOVERY).until(() -> Ledger.distinctChargedOrders(RUN) >= next);
                    long recoveryMillis = (System.nanoTime() - ready) / 1_000_000;
                    report.add("kill " + (i + 1) + " at " + chargedAtKill + " orders charged; the restarted process charged"
                            + " the next 40 (those in flight at the kill among them) in " + recoveryMillis + " ms");
                }
            } catch (RuntimeException | Error e) {
                running.close(); // a process left running would consume the next test's payments
                throw e;
            }
            try (AppProcess last = running) {
                try {
                    await().atMost(RECOVERY).until(() -> Ledger.distinctChargedOrders(RUN) == ORDERS
                            && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0
                            && broker.ready(Broker.DLQ) >= KEYLESS);
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    throw new AssertionError("not all handled within " + RECOVERY + ": " + Ledger.distinctChargedOrders(RUN)
                            + " of " + ORDERS + " orders charged, " + broker.ready(Broker.QUEUE) + " ready in the queue, "
                            + Ledger.claims() + " claims, " + broker.ready(Broker.DLQ) + " dead-lettered (" + KEYLESS
                            + " expected); " + String.join("; ", report), e);
                }
                // Each charge's receipt went through the outbox in the charge's transaction: a kill between a commit and
                // the broker's confirm left its row, which the relay sends once its lease ran out, under its id.
                await().atMost(Duration.ofSeconds(90)).until(() -> Ledger.outboxRows() == 0
                        && Ledger.chargesWithoutOneReceipt(RUN) == 0);
                report.add("receipts recorded downstream " + Ledger.receipts(RUN) + " (one per order); relayed by the"
                        + " last process " + last.metric("idempotency_outbox_sent_total", "path=\"relay\""));
                double takeovers = last.metric("idempotency_takeovers_total", "channel=\"payments\"");
                report.add("published " + messages.size() + " messages for " + ORDERS + " orders; charges "
                        + Ledger.chargesOfRun(RUN) + "; dead-lettered " + broker.ready(Broker.DLQ)
                        + "; takeovers by the last process " + takeovers);
                System.out.println("CRASH TEST: " + String.join("; ", report));
                assertEquals(0, takeovers, "nothing to take over: the killed processes left no claims");
            }
            assertEquals(ORDERS, Ledger.chargesOfRun(RUN), "every payment charged exactly once");
            // A process killed between publishing a dead letter and acknowledging its message dead-letters that message
            // again after the restart (dead-lettering is at least once, like every delivery): the same message id.
            List<String> deadLettered = new ArrayList<>();
            for (GetResponse r = broker.nextDeadLetter(); r != null; r = broker.nextDeadLetter()) {
                deadLettered.add(r.getProps().getMessageId());
            }
            assertEquals(new TreeSet<>(keyless), new TreeSet<>(deadLettered),
                    "only the keyless payments were dead-lettered: " + deadLettered);
        }
    }

    /**
     * Publishes every order once, 20% of them again under the same message id (a redelivery) and 10% under a new one
     * (a republish), plus a few payments without an order id; shuffled.
     *
     * @return the message ids of the payments without an order id
     */
    static List<String> publishMix(Broker broker, List<String> messages) {
        Random random = new Random(42);
        List<String[]> mix = new ArrayList<>();
        for (int i = 0; i < ORDERS; i++) {
            String id = UUID.randomUUID().toString();
            String body = Broker.payment(RUN + i, 100 + i);
            mix.add(new String[] { id, body });
            if (random.nextInt(100) < 20) {
                mix.add(new String[] { id, body });
            }
            if (random.nextInt(100) < 10) {
                mix.add(new String[] { UUID.randomUUID().toString(), body });
            }
        }
        List<String> keyless = new ArrayList<>();
        for (int i = 0; i < KEYLESS; i++) {
            keyless.add(UUID.randomUUID().toString());
            mix.add(new String[] { keyless.get(i), Broker.payment(null, 1) });
        }
        Collections.shuffle(mix, random);
        for (String[] m : mix) {
            broker.publishToQueue(m[0], m[1]);
            messages.add(m[0]);
        }
        return keyless;
    }
}
