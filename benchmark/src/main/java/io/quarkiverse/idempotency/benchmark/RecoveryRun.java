package io.quarkiverse.idempotency.benchmark;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;

import io.quarkus.runtime.Quarkus;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;

/**
 * Crash recovery, measured: a consumer process with the extension's defaults (this benchmark's own jar, in a
 * consumer role) gets a batch of messages whose handler takes a while, is killed with SIGKILL while they are in
 * flight, and is restarted; the figure is the seconds from the restart (the process launched) until every message
 * was handled. A {@code @Transactional} handler writes its keys in its transactions, so a kill leaves nothing behind;
 * a handler without a transaction holds leases, which the restarted process must wait out.
 */
final class RecoveryRun {

    /** A consumer the measurement kills: its channel (and queue), and what its handler writes. */
    record Mode(String channel, String queue) {
    }

    static final Mode TRANSACTIONAL = new Mode("recovery", "bench-recovery-live");
    static final Mode WITHOUT_TRANSACTION = new Mode("recovery-nontx", "bench-recovery-nontx-live");
    /** As many as the channel has outstanding: all of them in flight at once. */
    static final int MESSAGES = 32;
    /** How many handlers must be running (holding their keys) when the consumer is killed. */
    private static final int HELD_AT_KILL = 8;
    static final String ROLE = "bench.recovery.consumer";
    static final String READY = "RECOVERY CONSUMER READY";
    /** A child whose channel its parent pauses and resumes (see {@link #consume}). */
    static final String CONTROLLED = "bench.consumer.controlled";

    /** What one measurement found. */
    record Result(long inFlight, double seconds, long heldAtKill) {
    }

    private final com.rabbitmq.client.Connection rabbit;
    private final DataSource dataSource;

    RecoveryRun(com.rabbitmq.client.Connection rabbit, DataSource dataSource) {
        this.rabbit = rabbit;
        this.dataSource = dataSource;
    }

    /** @return the channel this process consumes as a child of the measurement, or {@code null} */
    static String consumerRole() {
        return System.getProperty(ROLE);
    }

    /**
     * The child's life: consume its channel (from a queue of its own) until killed. With {@link #CONTROLLED} its
     * channel stays paused until the parent writes {@code resume} to its input, and pauses again on {@code pause}.
     */
    static int consume(ChannelRegistry channels) {
        PausableChannel channel = channels.getPausable(consumerRole());
        if (Boolean.getBoolean(CONTROLLED)) {
            Thread control = new Thread(() -> follow(channel), "bench-consumer-control");
            control.setDaemon(true);
            control.start();
        } else {
            channel.resume();
        }
        System.out.println(READY);
        Quarkus.waitForExit();
        return 0;
    }

    /** The child's channel paused and resumed as its parent says, a line per command. */
    private static void follow(PausableChannel channel) {
        try (java.io.BufferedReader commands = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8))) {
            for (String command; (command = commands.readLine()) != null;) {
                switch (command.trim()) {
                    case "resume" -> channel.resume();
                    case "pause" -> channel.pause();
                    default -> System.err.println("unknown command: " + command);
                }
            }
        } catch (java.io.IOException e) {
            System.err.println("the parent's commands ended: " + e);
        }
        Quarkus.asyncExit(); // the parent is gone: so is this consumer
    }

    Result run(Mode mode) throws Exception {
        execute("DELETE FROM bench_row WHERE consumer = '" + mode.channel() + "'");
        execute("DELETE FROM idempotency_record WHERE scope = '" + mode.channel() + "'");
        // The child declares the queue; this process publishes once it consumes.
        Process first = start(mode, "first");
        waitUntil(() -> {
            try (Channel c = rabbit.createChannel()) {
                c.queuePurge(mode.queue());
                return true;
            } catch (java.io.IOException notDeclaredYet) {
                return false;
            }
        }, 60, "the consumer to declare its queue");
        try (Channel publisher = rabbit.createChannel()) {
            publisher.confirmSelect();
            for (int i = 0; i < MESSAGES; i++) {
                AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("text/plain")
                        .messageId(UUID.randomUUID().toString()).deliveryMode(2).headers(Map.of()).build();
                publisher.basicPublish("", mode.queue(), props, ("recovery-" + i).getBytes(StandardCharsets.UTF_8));
            }
            publisher.waitForConfirmsOrDie(30_000);
        }
        long heldAtKill = 0;
        try {
            // every message delivered to it and none acked yet, and handlers running: their keys held
            waitUntil(() -> ready(mode.queue()) == 0 && held(mode) >= HELD_AT_KILL, 120,
                    "the consumer to be handling the messages");
            heldAtKill = held(mode);
        } finally {
            first.destroyForcibly(); // SIGKILL
            first.waitFor();
        }
        long handled = count(mode);
        long held = heldAtKill;
        long restart = System.nanoTime();
        Process second = start(mode, "second");
        try {
            waitUntil(() -> count(mode) == MESSAGES, 300, "the restarted consumer to handle every message");
            double seconds = (System.nanoTime() - restart) / 1e9;
            return new Result(MESSAGES - handled, seconds, held);
        } finally {
            second.destroy();
            second.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private Process start(Mode mode, String name) throws Exception {
        return ConsumerProcess.start(mode.channel(), mode.queue(), List.of(),
                ConsumerProcess.log("recovery-" + mode.channel() + "-" + name));
    }

    private long count(Mode mode) throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(DISTINCT payload) FROM bench_row WHERE consumer = '"
                        + mode.channel() + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * @return keys held by running handlers: lease-mode claims, or the advisory locks of in-transaction deliveries
     *         (their rows are not committed yet)
     */
    private long held(Mode mode) throws Exception {
        String sql = mode == TRANSACTIONAL
                ? "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                : "SELECT count(*) FROM idempotency_record WHERE scope = '" + mode.channel() + "' AND state = 'CLAIMED'";
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private long ready(String queue) throws Exception {
        try (Channel c = rabbit.createChannel()) {
            return c.queueDeclarePassive(queue).getMessageCount();
        }
    }

    private void execute(String sql) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    interface Check {
        boolean ok() throws Exception;
    }

    private static void waitUntil(Check check, int seconds, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20); // polling the broker and the database from outside the consumer
        }
    }
}
