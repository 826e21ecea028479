package io.quarkiverse.idempotency.it.matrix;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.it.Broker;
import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * A crash loop: the packaged application, named by {@code quarkus.idempotency.instance-id} as a pod is, is killed with
 * SIGKILL three times while the messages redelivered after the kill before run. Those run on a lease (their attempt
 * may have killed the process), so each kill leaves their claims behind. Each restart ends the leases its earlier
 * starts left, so the last one handles every order within seconds, not after the 30 s lease; each once, each takeover
 * counted.
 */
class CrashLoopIT {

    static final int ORDERS = 120;
    /** The bound on recovery after the last restart: seconds, where waiting for the leases would take 30. */
    static final Duration RECOVERY = Duration.ofSeconds(10);

    @Test
    void killedThreeTimesWhileRedeliveredMessagesRunTheLastStartHandlesEveryOrderWithinSeconds() throws Exception {
        // this run's orders only: a message of an earlier run may still wait in a delay queue
        String prefix = "L" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Map<String, String> env = new HashMap<>(Services.with(Map.of("DEMO_GATEWAY_LATENCY", "700ms")));
        env.put("QUARKUS_IDEMPOTENCY_INSTANCE_ID", "payments-0");
        // each kill counts an attempt of the messages it interrupts (a message that kills its process is dead-lettered
        // within its budget): a budget that outlasts this loop's three kills
        env.put("QUARKUS_IDEMPOTENCY_RETRY_MAX_ATTEMPTS", "10");
        try (Broker broker = new Broker()) {
            try (AppProcess setup = AppProcess.start("crash-loop-setup", env)) {
                broker.reset();
                Ledger.reset();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> broker.consumers(Broker.QUEUE) == 0);
            for (int i = 0; i < ORDERS; i++) {
                broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment(prefix + i, 100 + i));
            }
            List<String> report = new ArrayList<>();
            AppProcess running = AppProcess.start("crash-loop-0", env);
            try {
                // first deliveries write their keys in their transactions: the first kill leaves no claim, and the
                // messages in flight come back redelivered. A window of messages commits at once, 700 ms after it
                // arrived, and the next window arrives with their acks: killed in the second window while messages
                // are mid-charge, their transactions open (a kill between a window's commits and its acks would leave
                // only charged ones to redeliver, which the next start acks as duplicates without claiming any)
                await().atMost(Duration.ofSeconds(60)).until(() -> charged(prefix) >= 40);
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                        .until(() -> Ledger.count("SELECT count(*) FROM pg_stat_activity WHERE datname ="
                                + " current_database() AND state = 'idle in transaction'") >= 10);
                running.kill();
                for (int i = 1; i <= 3; i++) {
                    String started = Ledger.text("SELECT now()::text");
                    running = AppProcess.start("crash-loop-" + i, env);
                    // a redelivered message claimed on a lease by this start, running: killed there
                    try {
                        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                                .until(() -> Ledger.count("SELECT count(*) FROM idempotency_record WHERE state ="
                                        + " 'CLAIMED' AND recorded_at > '" + started + "' AND scoped_key LIKE"
                                        + " 'payments:charge:" + prefix + "%'") > 0);
                    } catch (org.awaitility.core.ConditionTimeoutException e) {
                        throw new AssertionError("start " + i + " claimed nothing in a minute: "
                                + charged(prefix) + " orders charged, " + claims(prefix) + " claims, "
                                + broker.ready(Broker.QUEUE) + " ready, " + broker.consumers(Broker.QUEUE)
                                + " consumers; " + String.join("; ", report), e);
                    }
                    running.kill();
                    report.add("kill " + i + " with " + claims(prefix) + " claims left, "
                            + charged(prefix) + " orders charged");
                }
            } catch (RuntimeException | Error e) {
                running.close();
                throw e;
            }
            assertTrue(claims(prefix) > 0, "the kills left claims behind: " + report);
            try (AppProcess last = AppProcess.start("crash-loop-4", env)) {
                long ready = System.nanoTime();
                try {
                    await().atMost(RECOVERY).until(() -> charged(prefix) == ORDERS
                            && claims(prefix) == 0 && broker.ready(Broker.QUEUE) == 0);
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    throw new AssertionError("not all handled within " + RECOVERY + " of the last restart: "
                            + charged(prefix) + " of " + ORDERS + " orders charged, " + claims(prefix)
                            + " claims, " + broker.ready(Broker.QUEUE) + " ready; " + String.join("; ", report), e);
                }
                long millis = (System.nanoTime() - ready) / 1_000_000;
                double takeovers = last.metric("idempotency_takeovers_total", "channel=\"payments\"");
                System.out.println("CRASH LOOP: " + String.join("; ", report) + "; the last start handled every order"
                        + " in " + millis + " ms, with " + takeovers + " takeovers");
                assertTrue(takeovers > 0, "the claims left behind were taken over, each counted as an attempt");
            }
            assertEquals(ORDERS, Ledger.count("SELECT count(*) FROM charge WHERE order_id LIKE '" + prefix + "%'"),
                    "every order charged exactly once");
        }
    }

    private static long charged(String prefix) {
        return Ledger.count("SELECT count(DISTINCT order_id) FROM charge WHERE order_id LIKE '" + prefix + "%'");
    }

    private static long claims(String prefix) {
        return Ledger.count("SELECT count(*) FROM idempotency_record WHERE state = 'CLAIMED' AND scoped_key LIKE"
                + " 'payments:charge:" + prefix + "%'");
    }
}
