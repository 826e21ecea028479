package io.quarkiverse.idempotency.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.it.Broker;
import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * The payments consumer with {@code asynchronous-commit}: each charge's transaction commits without waiting for its
 * WAL flush, and its message is acked once a shared flush has passed it. The PostgreSQL server crashes mid-stream
 * ({@code pg_ctlcluster ... stop -m immediate}: no shutdown checkpoint, every backend gone at once) and restarts:
 * every payment is charged exactly once. A charge whose commit was not yet flushed is lost with the crash, but its
 * message was not acked either, so it comes back and is charged then. So that the crash does lose commits, the WAL
 * writer sleeps 10 s meanwhile and the application is frozen (SIGSTOP) just before it: what it committed since its last
 * flush is then visible, yet still in the server's WAL buffers when the server dies. (Written WAL that is not yet on
 * disk survives a crash of the server, not of the machine; this is the part a crash of the server loses.)
 * <p>
 * It stops the tests' PostgreSQL, so it runs only where {@code TEST_POSTGRES_CLUSTER} names the local cluster to
 * crash ({@code "15 main"}, as {@code pg_lsclusters} shows it; {@code .ci/run} sets it).
 */
class DatabaseCrashIT {

    static final int ORDERS = 1500;
    static final Duration BOUND = Duration.ofSeconds(90);
    static final Map<String, String> ENV = Map.of("DEMO_ASYNCHRONOUS_COMMIT", "true");

    @Test
    void thePostgreSQLServerCrashesMidStreamEveryPaymentIsChargedExactlyOnce() throws Exception {
        String cluster = System.getenv("TEST_POSTGRES_CLUSTER");
        Assumptions.assumeTrue(cluster != null && !cluster.isBlank(),
                "TEST_POSTGRES_CLUSTER is not set: no local PostgreSQL cluster to crash");
        try (Broker broker = new Broker()) {
            try (AppProcess setup = AppProcess.start("database-crash-setup", Services.with(ENV))) {
                broker.reset();
                Ledger.reset();
            }
            long deadLetteredBefore = broker.ready(Broker.DLQ); // what an earlier test may have left
            // Which charges committed asynchronously: a row in the same transaction, so lost with it.
            Ledger.execute("CREATE TABLE IF NOT EXISTS database_crash_async (order_id varchar NOT NULL)");
            Ledger.execute("DELETE FROM database_crash_async");
            Ledger.execute("CREATE OR REPLACE FUNCTION database_crash_async() RETURNS trigger LANGUAGE plpgsql AS"
                    + " $f$ BEGIN IF current_setting('synchronous_commit') = 'off' THEN INSERT INTO"
                    + " database_crash_async VALUES (NEW.order_id); END IF; RETURN NEW; END $f$");
            Ledger.execute("DROP TRIGGER IF EXISTS database_crash_async ON charge");
            Ledger.execute("CREATE TRIGGER database_crash_async BEFORE INSERT ON charge FOR EACH ROW EXECUTE FUNCTION"
                    + " database_crash_async()");
            Ledger.execute("ALTER SYSTEM SET wal_writer_delay = '10s'");
            Ledger.execute("SELECT pg_reload_conf()");
            try {
                for (int i = 0; i < ORDERS; i++) {
                    broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment("D-" + i, 100 + i));
                }
                try (AppProcess app = AppProcess.start("database-crash", Services.with(ENV))) {
                    await().atMost(Duration.ofSeconds(120)).until(() -> charged() >= ORDERS / 3);
                    // Frozen, the application asks for no flush: what it committed since its last one stays in the
                    // WAL buffers (the WAL writer sleeps 10 s here), visible but not written, and the crash loses it.
                    signal(app, "STOP");
                    long visibleAtCrash = charged();
                    pgCtl(cluster, "stop", "-m", "immediate");
                    pgCtl(cluster, "start");
                    await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> Ledger.count("SELECT 1") == 1);
                    long keptByCrash = charged();
                    signal(app, "CONT");
                    assertTrue(keptByCrash < ORDERS, "crashed mid-stream");
                    long ready = System.nanoTime();
                    try {
                        await().atMost(BOUND).until(() -> charged() == ORDERS
                                && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0);
                    } catch (ConditionTimeoutException e) {
                        throw new AssertionError(charged() + " of " + ORDERS + " orders charged, "
                                + broker.ready(Broker.QUEUE) + " ready, " + Ledger.claims() + " claims, "
                                + broker.ready(Broker.DLQ) + " dead-lettered (" + deadLetteredBefore + " before);"
                                + " the keys by state: " + Ledger.text("SELECT string_agg(state || ' ' || n, ', ') FROM"
                                        + " (SELECT state, count(*) n FROM idempotency_record WHERE scope = 'payments'"
                                        + " GROUP BY state) s"),
                                e);
                    }
                    long chargedMs = (System.nanoTime() - ready) / 1_000_000;
                    // Each charge's receipt goes through the outbox once its asynchronous commit is durable: a receipt
                    // sent for a charge the crash undid would be a second receipt, under another id, for its order.
                    await().atMost(Duration.ofSeconds(90)).until(() -> Ledger.outboxRows() == 0
                            && Ledger.distinctReceiptOrders("D-") == ORDERS);
                    long receiptsMs = (System.nanoTime() - ready) / 1_000_000;
                    assertEquals(ORDERS, Ledger.receipts("D-"), "one receipt per order, none for a charge the crash"
                            + " undid");
                    long asynchronous = Ledger.count("SELECT count(*) FROM database_crash_async");
                    System.out.println("DATABASE CRASH: crashed with " + visibleAtCrash + " orders charged as seen, "
                            + keptByCrash + " kept by the crash (" + (visibleAtCrash - keptByCrash) + " committed but"
                            + " lost, their messages not acked); all " + ORDERS + " charged "
                            + chargedMs + " ms after the restart, every receipt sent " + receiptsMs + " ms after it; "
                            + asynchronous
                            + " charges committed asynchronously; charges " + Ledger.count("SELECT count(*) FROM charge WHERE"
                                    + " order_id LIKE 'D-%'")
                            + "; dead-lettered "
                            + broker.ready(Broker.DLQ) + "; the application's log: " + app.logText().lines()
                                    .filter(line -> line.contains("WARN") || line.contains("ERROR")).count()
                            + " warnings and errors");
                    assertTrue(asynchronous > 0, "the charges committed asynchronously");
                }
            } finally {
                await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> Ledger.count("SELECT 1") == 1);
                Ledger.execute("ALTER SYSTEM RESET wal_writer_delay");
                Ledger.execute("SELECT pg_reload_conf()");
                Ledger.execute("DROP TRIGGER IF EXISTS database_crash_async ON charge");
            }
            assertEquals(ORDERS, Ledger.count("SELECT count(*) FROM charge WHERE order_id LIKE 'D-%'"),
                    "every payment charged exactly once");
            assertEquals(deadLetteredBefore, broker.ready(Broker.DLQ), "none dead-lettered");
        }
    }

    /** The orders of this test charged (a message an earlier test left behind may charge one of its own). */
    private static long charged() {
        return Ledger.count("SELECT count(DISTINCT order_id) FROM charge WHERE order_id LIKE 'D-%'");
    }

    private static void signal(AppProcess app, String signal) throws IOException, InterruptedException {
        run(List.of("kill", "-" + signal, String.valueOf(app.pid())));
    }

    private static void pgCtl(String cluster, String... action) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("pg_ctlcluster", "--skip-systemctl-redirect"));
        command.addAll(List.of(cluster.trim().split("\\s+")));
        command.addAll(List.of(action));
        run(command);
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("pg_ctlcluster", ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + Files.readString(log));
        }
    }
}
