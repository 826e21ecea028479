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
 * The packaged application killed with SIGKILL while a batch of lease-mode claims is in its statement (the audit
 * consumer with four deliveries at once, whose claims share statements and commits): the batch never commits, so it
 * leaves no key behind; its messages, never acked, come back after the restart and are claimed anew. A trigger slows
 * the audit consumer's claims down (0.3 s per claimed key) so that batches form and the kill lands inside one.
 */
class LeaseBatchCrashIT {

    static final int MESSAGES = 40;
    static final Duration LEASE = Duration.ofSeconds(6);
    static final Duration BOUND = Duration.ofSeconds(30);
    static final Map<String, String> ENV = Map.of("QUARKUS_IDEMPOTENCY_LEASE", LEASE.toSeconds() + "s",
            "MP_MESSAGING_INCOMING_PAYMENTS_AUDIT_CONCURRENCY", "4",
            // one unacked message per consumer: the first to connect would otherwise take every message queued
            // before the start, and its deliveries run one at a time
            "MP_MESSAGING_INCOMING_PAYMENTS_AUDIT_MAX_OUTSTANDING_MESSAGES", "1");
    /** The batch statement of claims, running (the trigger sleeps in it). */
    static final String BATCH_RUNNING = "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
            + " AND wait_event = 'PgSleep' AND query LIKE '%WITH ORDINALITY AS u(scoped_key, scope, token%'";

    @Test
    void killedWithABatchOfClaimsInItsStatementEveryMessageIsAuditedOnceTheBatchLeftNothing() throws Exception {
        try (Broker broker = new Broker()) {
            try (AppProcess setup = AppProcess.start("lease-batch-crash-setup", Services.with(ENV))) {
                broker.reset();
                Ledger.reset();
            }
            Ledger.execute("CREATE OR REPLACE FUNCTION lease_batch_crash_slow() RETURNS trigger LANGUAGE plpgsql AS"
                    + " $f$ BEGIN IF NEW.scope = 'payments-audit' AND NEW.state = 'CLAIMED' THEN PERFORM pg_sleep(0.3);"
                    + " END IF; RETURN NEW; END $f$");
            Ledger.execute("DROP TRIGGER IF EXISTS lease_batch_crash_slow ON idempotency_record");
            Ledger.execute("CREATE TRIGGER lease_batch_crash_slow BEFORE INSERT OR UPDATE ON idempotency_record"
                    + " FOR EACH ROW EXECUTE FUNCTION lease_batch_crash_slow()");
            long auditedAtKill;
            long claimsAtKill;
            try {
                for (int i = 0; i < MESSAGES; i++) {
                    broker.publish(UUID.randomUUID().toString(), Broker.payment("B-" + i, 100 + i));
                }
                AppProcess first = AppProcess.start("lease-batch-crash-0", Services.with(ENV));
                try {
                    await().atMost(Duration.ofSeconds(60)).until(() -> Ledger.audited("B-") >= 4
                            && Ledger.count(BATCH_RUNNING) > 0);
                    first.kill();
                    auditedAtKill = Ledger.audited("B-");
                    claimsAtKill = Ledger.auditClaims();
                    assertTrue(auditedAtKill < MESSAGES, "killed mid-stream");
                } finally {
                    first.close();
                }
            } finally {
                Ledger.execute("DROP TRIGGER IF EXISTS lease_batch_crash_slow ON idempotency_record");
            }
            assertEquals(0, Ledger.count(BATCH_RUNNING), "the killed process's batch ended with its connection");
            try (AppProcess second = AppProcess.start("lease-batch-crash-1", Services.with(ENV))) {
                long ready = System.nanoTime();
                try {
                    await().atMost(LEASE.plus(BOUND))
                            .until(() -> Ledger.distinctAudited("B-") == MESSAGES && Ledger.auditClaims() == 0
                                    && broker.ready(Broker.AUDIT_QUEUE) == 0);
                } catch (ConditionTimeoutException e) {
                    throw new AssertionError(
                            Ledger.distinctAudited("B-") + " of " + MESSAGES + " audited, " + Ledger.auditClaims()
                                    + " claims, " + broker.ready(Broker.AUDIT_QUEUE) + " ready",
                            e);
                }
                long again = Ledger.audited("B-") - MESSAGES;
                System.out.println("LEASE BATCH CRASH: killed inside a batch statement, with " + claimsAtKill
                        + " committed live claims and " + auditedAtKill + " messages audited; all " + MESSAGES
                        + " audited " + (System.nanoTime() - ready) / 1_000_000 + " ms after the restart; audited twice "
                        + again);
                assertTrue(again >= 0 && again <= claimsAtKill, "only work done but not confirmed at the kill ran"
                        + " again: " + again + " of " + claimsAtKill + " committed claims");
                assertEquals(0, broker.ready(Broker.AUDIT_QUEUE + ".dlq"));
            }
        }
    }
}
