package io.quarkiverse.idempotency.reactive;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * The packaged application's reactive consumer is killed with SIGKILL while it charges, three times, and restarted:
 * every payment is charged exactly once, and the queue ends empty. Its key and its charge commit in one reactive
 * transaction, so a kill leaves either both or neither.
 */
class ReactiveCrashIT {

    static final int ORDERS = 400;

    @Test
    void killedThreeTimesWhileChargingEveryPaymentIsChargedExactlyOnce() throws Exception {
        try (Broker broker = new Broker()) {
            try (AppProcess setup = AppProcess.start("reactive-crash-setup", ReactiveServices.environment())) {
                broker.reset(); // waits for the queues the application declares
            }
            // every order once, 20% again under the same message id (a redelivery), 10% under a new one (a republish);
            // each charge holds its transaction open a little, so that kills land while charges are in flight
            Random random = new Random(7);
            List<String[]> mix = new ArrayList<>();
            for (int i = 0; i < ORDERS; i++) {
                String id = UUID.randomUUID().toString();
                String body = Broker.payment("K-" + i, "\"slowMs\": 40");
                mix.add(new String[] { id, body });
                if (random.nextInt(100) < 20) {
                    mix.add(new String[] { id, body });
                }
                if (random.nextInt(100) < 10) {
                    mix.add(new String[] { UUID.randomUUID().toString(), body });
                }
            }
            Collections.shuffle(mix, random);
            for (String[] message : mix) {
                broker.publish(Broker.REACTIVE, message[0], message[1]);
            }

            AppProcess running = AppProcess.start("reactive-crash-0", ReactiveServices.environment());
            List<String> report = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    long target = (i + 1) * ORDERS / 4;
                    // a message the broker says it delivered before is claimed on a lease first (its attempt may have
                    // killed a process), so a kill while it runs leaves that claim, by design: kill between those
                    await().atMost(Duration.ofSeconds(120))
                            .until(() -> Ledger.distinctChargesOf("K-") >= target && Ledger.claims() == 0);
                    running.kill();
                    long chargedAtKill = Ledger.distinctChargesOf("K-");
                    assertTrue(chargedAtKill < ORDERS, "killed mid-stream, not after the last payment");
                    report.add("kill " + (i + 1) + " at " + chargedAtKill + " orders charged");
                    running = AppProcess.start("reactive-crash-" + (i + 1), ReactiveServices.environment());
                }
            } catch (RuntimeException | Error e) {
                running.close();
                throw e;
            }
            try (AppProcess last = running) {
                await().atMost(Duration.ofSeconds(120)).until(() -> Ledger.distinctChargesOf("K-") == ORDERS
                        && broker.ready(Broker.REACTIVE) == 0 && Ledger.claims() == 0);
                System.out.println("REACTIVE CRASH TEST: published " + mix.size() + " messages for " + ORDERS
                        + " orders; " + String.join("; ", report) + "; charges " + Ledger.chargesOf("K-"));
            }
            assertEquals(ORDERS, Ledger.chargesOf("K-"), "every payment charged exactly once");
            assertEquals(null, broker.nextDeadLetter(Broker.REACTIVE), "nothing dead-lettered");
        }
    }
}
