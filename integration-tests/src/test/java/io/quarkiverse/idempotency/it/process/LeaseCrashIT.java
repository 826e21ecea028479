package io.quarkiverse.idempotency.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.it.Broker;
import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * Crash recovery of a lease-mode consumer (the demo's audit consumer, which has no transaction of its own), end to
 * end: the packaged application is killed with SIGKILL while claims are live, and restarted. The redelivered messages
 * find those claims, wait while their lease runs, then take them over (each takeover counted as an attempt): every
 * message is audited within the lease plus a bound, and only work that was done but not yet confirmed at the kill runs
 * a second time.
 */
class LeaseCrashIT {

    static final int MESSAGES = 60;
    static final Duration LEASE = Duration.ofSeconds(6);
    /** Beyond the lease: the requeue delays while the claims are held, and the handling itself, on a busy machine. */
    static final Duration BOUND = Duration.ofSeconds(20);
    static final Map<String, String> ENV = Map.of("QUARKUS_IDEMPOTENCY_LEASE", LEASE.toSeconds() + "s",
            "DEMO_AUDIT_LATENCY", "200ms");

    @Test
    void killedWhileItsClaimsAreLiveEveryMessageIsHandledWithinTheLeasePlusABound() throws Exception {
        try (Broker broker = new Broker()) {
            try (AppProcess setup = AppProcess.start("lease-crash-setup", Services.with(ENV))) {
                broker.reset();
                Ledger.reset();
            }
            for (int i = 0; i < MESSAGES; i++) {
                broker.publish(UUID.randomUUID().toString(), Broker.payment("L-" + i, 100 + i));
            }
            AppProcess first = AppProcess.start("lease-crash-0", Services.with(ENV));
            long claimsAtKill;
            long auditedAtKill;
            try {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> Ledger.audited("L-") >= MESSAGES / 4 && Ledger.auditClaims() > 0);
                first.kill();
                claimsAtKill = Ledger.auditClaims();
                auditedAtKill = Ledger.audited("L-");
                assertTrue(claimsAtKill > 0, "the kill left live claims behind");
                assertTrue(auditedAtKill < MESSAGES, "killed mid-stream");
            } finally {
                first.close();
            }
            try (AppProcess second = AppProcess.start("lease-crash-1", Services.with(ENV))) {
                long ready = System.nanoTime();
                try {
                    await().atMost(LEASE.plus(BOUND))
                            .until(() -> Ledger.distinctAudited("L-") == MESSAGES && Ledger.auditClaims() == 0
                                    && broker.ready(Broker.AUDIT_QUEUE) == 0);
                } catch (ConditionTimeoutException e) {
                    throw new AssertionError(
                            Ledger.distinctAudited("L-") + " of " + MESSAGES + " audited, " + Ledger.auditClaims()
                                    + " claims, " + broker.ready(Broker.AUDIT_QUEUE) + " ready, within " + LEASE.plus(BOUND),
                            e);
                }
                long recoveredMillis = (System.nanoTime() - ready) / 1_000_000;
                double takeovers = second.metric("idempotency_takeovers_total", "channel=\"payments-audit\"");
                long again = Ledger.audited("L-") - MESSAGES;
                System.out.println("LEASE CRASH: killed with " + claimsAtKill + " live claims and " + auditedAtKill
                        + " messages audited; all " + MESSAGES + " audited " + recoveredMillis + " ms after the restart"
                        + " (lease " + LEASE.toMillis() + " ms); takeovers " + takeovers + "; audited twice " + again);
                assertTrue(takeovers >= 1 && takeovers <= claimsAtKill, "the claims left behind were taken over: "
                        + takeovers + " of " + claimsAtKill);
                assertTrue(again >= 0 && again <= claimsAtKill, "only work done but not confirmed at the kill ran"
                        + " again: " + again + " of " + claimsAtKill + " claims");
                assertEquals(0, broker.ready(Broker.AUDIT_QUEUE + ".dlq"), "a takeover is an attempt, not a failure"
                        + " that spends the budget at once");
            }
        }
    }
}
