package io.quarkiverse.idempotency.benchmark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.eclipse.microprofile.config.ConfigProvider;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;

/**
 * {@code partitioned_vs_flat}: the default {@code @Idempotent} consumer with the benchmark's configuration (the purge
 * job off, 256 messages outstanding) on a key table partitioned by time, against the same on one table.
 * <p>
 * Each layout gets a consumer process of its own, started once, on a schema of its own (so that both tables, of one
 * name, exist side by side), and a queue of its own. Both are warmed up first, a minute each by default: on this
 * machine's two cores the JIT compiles the consumer's path for well over a hundred thousand messages, and a consumer
 * measured before that is measured on its compiler. Then rounds, each layout once per round, which goes first
 * alternating: the messages published while the consumer is paused (nothing else runs while it is timed), the consumer
 * resumed, and timed from its queue's depth between 90% and 10% of the messages left (both ends with its prefetch
 * full; each message's id new to the run, never a key an earlier run left). The ratio is the best partitioned run over the best
 * unpartitioned one, as the main measurement takes each
 * consumer's best (5 rounds by default); every round's pair is printed too, since this machine is noisy.
 */
final class LayoutRun {

    static final int ROUNDS = Integer.getInteger("bench.layouts.rounds", 5);
    static final int MESSAGES = Integer.getInteger("bench.layouts.messages", 40_000);
    static final long WARMUP_SECONDS = Long.getLong("bench.layouts.warmup-seconds", 60);
    private static final String CHANNEL = "idempotent";
    private static final int BATCH = 5_000;
    /** The consumer's prefetch (the benchmark's {@code max-outstanding-messages}). */
    private static final int PREFETCH = 256;
    /** Each message's id is unique to this run: a key left by an earlier run would make it a duplicate. */
    private final String run = Long.toString(System.currentTimeMillis(), 36);

    /** A layout under test: its name, the setting that makes it, and the schema and queue its consumer uses. */
    private record Layout(String name, String partitioning) {

        String schema() {
            return "bench_layout_" + name;
        }

        String queue() {
            return "bench-layout-" + name;
        }
    }

    private static final Layout PARTITIONED = new Layout("partitioned", "time");
    private static final Layout FLAT = new Layout("flat", "none");

    private final com.rabbitmq.client.Connection rabbit;
    private final DataSource dataSource;

    LayoutRun(com.rabbitmq.client.Connection rabbit, DataSource dataSource) {
        this.rabbit = rabbit;
        this.dataSource = dataSource;
    }

    /** @return the best partitioned rate over the best unpartitioned one */
    double run() throws Exception {
        if (MESSAGES < 3_000) {
            throw new IllegalArgumentException("bench.layouts.messages=" + MESSAGES + " is too few to time (at least 3000)");
        }
        List<Process> consumers = new ArrayList<>();
        try (Channel publisher = rabbit.createChannel()) {
            publisher.confirmSelect();
            Process partitioned = start(PARTITIONED);
            consumers.add(partitioned);
            Process flat = start(FLAT);
            consumers.add(flat);
            warmUp(publisher, PARTITIONED, partitioned);
            warmUp(publisher, FLAT, flat);
            double bestPartitioned = 0;
            double bestFlat = 0;
            List<String> pairs = new ArrayList<>();
            for (int round = 0; round < ROUNDS; round++) {
                double p;
                double f;
                if (round % 2 == 0) {
                    p = measure(publisher, PARTITIONED, partitioned);
                    f = measure(publisher, FLAT, flat);
                } else {
                    f = measure(publisher, FLAT, flat);
                    p = measure(publisher, PARTITIONED, partitioned);
                }
                System.out.printf(Locale.ROOT, "   layouts, round %d: partitioned by time %.0f msg/s, one table %.0f msg/s%n",
                        round + 1, p, f);
                bestPartitioned = Math.max(bestPartitioned, p);
                bestFlat = Math.max(bestFlat, f);
                pairs.add(String.format(Locale.ROOT, "%.0f/%.0f (%.2f)", p, f, p / f));
            }
            System.out.printf(Locale.ROOT, "8. layouts: the default consumer in a process of its own per layout, warmed up"
                    + " %d s, %d messages per run: partitioned by time %.0f msg/s, one table %.0f msg/s at best (ratio"
                    + " %.2f); each round partitioned/one table: %s%n", WARMUP_SECONDS, MESSAGES, bestPartitioned, bestFlat,
                    bestPartitioned / bestFlat, String.join(", ", pairs));
            return bestPartitioned / bestFlat;
        } finally {
            for (Process consumer : consumers) {
                consumer.destroy();
                if (!consumer.waitFor(30, TimeUnit.SECONDS)) {
                    consumer.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            }
            // what the consumers held when they stopped goes back to their queues: gone with them
            for (Layout layout : List.of(PARTITIONED, FLAT)) {
                try (Channel c = rabbit.createChannel()) {
                    c.queueDelete(layout.queue());
                    c.queueDelete(layout.queue() + ".dlq");
                }
                execute("DROP SCHEMA IF EXISTS " + layout.schema() + " CASCADE");
            }
        }
    }

    /**
     * The consumer, on its queue kept full for the warm-up's seconds; then paused, its queue emptied, and its table
     * analysed, as autovacuum does after a table's first rows (this machine's server runs without autovacuum, and plans
     * made while the table was empty would otherwise stay).
     */
    private void warmUp(Channel publisher, Layout layout, Process consumer) throws Exception {
        command(consumer, "resume");
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WARMUP_SECONDS);
        while (System.nanoTime() < end) {
            if (ready(layout) < BATCH) {
                publish(publisher, layout, BATCH);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        command(consumer, "pause");
        // the queue emptied; what the paused consumer holds (its prefetch) it handles when next resumed, before the
        // measurement's window opens
        publisher.queuePurge(layout.queue());
        TimeUnit.SECONDS.sleep(1);
        execute("ANALYZE " + layout.schema() + ".idempotency_record");
    }

    /** @return the consumer's rate on a queue of {@link #MESSAGES} published while it was paused */
    private double measure(Channel publisher, Layout layout, Process consumer) throws Exception {
        publisher.queuePurge(layout.queue());
        publish(publisher, layout, MESSAGES);
        // both ends with the prefetch full: the window opens once the consumer has taken more than its prefetch
        long from = Math.min((long) (MESSAGES * 0.9), MESSAGES - 4L * PREFETCH);
        long to = (long) (MESSAGES * 0.1);
        command(consumer, "resume");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        long[] first = null;
        long[] last;
        while (true) {
            long nanos = System.nanoTime();
            long ready = ready(layout);
            if (first == null && ready <= from) {
                first = new long[] { nanos, ready };
            }
            if (ready <= to) {
                last = new long[] { nanos, ready };
                break;
            }
            alive(layout, consumer, deadline, ready);
            TimeUnit.MILLISECONDS.sleep(50);
        }
        command(consumer, "pause");
        while (ready(layout) > 0) { // the rest, so that the next run starts from an empty queue
            alive(layout, consumer, deadline, ready(layout));
            command(consumer, "resume");
            TimeUnit.MILLISECONDS.sleep(200);
            command(consumer, "pause");
        }
        TimeUnit.SECONDS.sleep(1);
        if (last[0] <= first[0]) {
            throw new IllegalStateException("the " + layout.name() + " layout's run was too short to time ("
                    + MESSAGES + " messages); raise bench.layouts.messages");
        }
        return (first[1] - last[1]) / ((last[0] - first[0]) / 1e9);
    }

    /** Fails a measurement whose consumer died or stopped consuming, naming its log. */
    private static void alive(Layout layout, Process consumer, long deadline, long ready) {
        if (!consumer.isAlive()) {
            throw new IllegalStateException("the " + layout.name() + " layout's consumer exited; see " + log(layout));
        }
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException("the " + layout.name() + " layout's consumer did not consume " + MESSAGES
                    + " messages in 300 s (" + ready + " left); see " + log(layout));
        }
    }

    /** Starts a layout's consumer, paused, on a fresh schema. */
    private Process start(Layout layout) throws Exception {
        execute("DROP SCHEMA IF EXISTS " + layout.schema() + " CASCADE");
        execute("CREATE SCHEMA " + layout.schema());
        execute("CREATE TABLE " + layout.schema() + ".bench_row (LIKE public.bench_row INCLUDING ALL)");
        String jdbc = ConfigProvider.getConfig().getValue("quarkus.datasource.jdbc.url", String.class);
        String reactive = ConfigProvider.getConfig().getValue("quarkus.datasource.reactive.url", String.class);
        Process process = ConsumerProcess.start(CHANNEL, layout.queue(), List.of("-D" + RecoveryRun.CONTROLLED + "=true",
                // the consumer's tables in its layout's schema; the extension creates its table, in the layout
                "-Dquarkus.datasource.jdbc.url=" + jdbc + (jdbc.contains("?") ? "&" : "?") + "currentSchema="
                        + layout.schema(),
                "-Dquarkus.datasource.reactive.url=" + reactive + (reactive.contains("?") ? "&" : "?") + "search_path="
                        + layout.schema(),
                "-Dquarkus.idempotency.database.schema-management=update",
                "-Dquarkus.idempotency.database.partitioning=" + layout.partitioning()), log(layout));
        ready(layout); // declared by the consumer once connected
        return process;
    }

    private static Path log(Layout layout) {
        return ConsumerProcess.log("layout-" + layout.name());
    }

    private static void command(Process consumer, String command) throws IOException {
        OutputStream in = consumer.getOutputStream();
        in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** @return the messages ready in the layout's queue, once the consumer has declared it */
    private long ready(Layout layout) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Channel c = rabbit.createChannel()) {
                return c.queueDeclarePassive(layout.queue()).getMessageCount();
            } catch (IOException notDeclaredYet) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the " + layout.name() + " layout's consumer did not declare "
                            + layout.queue() + "; see " + log(layout), notDeclaredYet);
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    private long published;

    private void publish(Channel publisher, Layout layout, int messages) throws Exception {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("text/plain").deliveryMode(2)
                .headers(Map.of()).build();
        for (int i = 0; i < messages; i++) {
            String id = "layout-" + run + "-" + published++;
            publisher.basicPublish("", layout.queue(), props.builder().messageId(id).build(),
                    id.getBytes(StandardCharsets.UTF_8));
            if (i % BATCH == BATCH - 1) {
                publisher.waitForConfirmsOrDie(60_000);
            }
        }
        publisher.waitForConfirmsOrDie(60_000);
    }

    private void execute(String sql) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
