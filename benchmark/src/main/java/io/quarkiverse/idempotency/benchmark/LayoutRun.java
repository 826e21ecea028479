package io.quarkiverse.idempotency.benchmark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.eclipse.microprofile.config.ConfigProvider;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;

import io.agroal.api.AgroalDataSource;

/**
 * The default layout's run: the default {@code @Idempotent} consumer with the benchmark's configuration (the purge job
 * off, 256 messages outstanding) on a key table partitioned by time, against the same on one table
 * ({@code partitioned_vs_flat}), against Spring Integration's idempotent receiver, the fastest peer of the main run
 * ({@code vs_peer_default}), and against the same consumer without idempotency ({@code overhead_default}).
 * <p>
 * Each contender gets a consumer process of its own, started once, on a schema of its own (so that tables of one name
 * exist side by side), and a queue of its own. All are warmed up first, a minute each by default (the first
 * round's first consumer last): on this machine's
 * two cores the JIT compiles the consumer's path for well over a hundred thousand messages, and a consumer measured
 * before that is measured on its compiler. Then rounds, each contender once per round, the order turning by one each
 * round: the messages published while the consumer is paused (nothing else runs while it is timed), the consumer
 * resumed, and timed from its queue's depth between 90% and 10% of the messages left (both ends with its prefetch full;
 * each message's id new to the run, never a key an earlier run left). Each ratio is a best run over a best run, as the
 * main measurement takes each consumer's best (5 rounds by default); every round's rates are printed too, with the
 * median of the rounds' pairs against the peer, since this machine is noisy.
 */
final class LayoutRun {

    static final int ROUNDS = Integer.getInteger("bench.layouts.rounds", 5);
    static final int MESSAGES = Integer.getInteger("bench.layouts.messages", 40_000);
    static final long WARMUP_SECONDS = Long.getLong("bench.layouts.warmup-seconds", 60);
    private static final int BATCH = 5_000;
    /** The consumer's prefetch (the benchmark's {@code max-outstanding-messages}). */
    private static final int PREFETCH = 256;
    /** The most JDBC connections of a consumer process. */
    private static final int CONNECTIONS = 12;
    /** Each message's id is unique to this run: a key left by an earlier run would make it a duplicate. */
    private final String run = Long.toString(System.currentTimeMillis(), 36);

    /**
     * A consumer under test: its name, its channel, the layout of the extension's table in its process, and the
     * schema and queue it uses.
     */
    private record Contender(String name, String channel, String partitioning) {

        String schema() {
            return "bench_layout_" + name.replace('-', '_');
        }

        String queue() {
            return "bench-layout-" + name;
        }
    }

    private static final Contender PARTITIONED = new Contender("partitioned", "idempotent", "time");
    private static final Contender FLAT = new Contender("flat", "idempotent", "none");
    /** Spring's receiver (its own table; the extension's, made by its process too, is not used). */
    private static final Contender SPRING = new Contender("spring-metadata", "spring-metadata", "time");
    /** The same work in the same transaction, without idempotency. */
    private static final Contender PLAIN = new Contender("plain", "plain", "time");
    private static final List<Contender> CONTENDERS = List.of(PARTITIONED, FLAT, SPRING, PLAIN);

    /**
     * The ratios, each a best run over a best run: the default consumer partitioned against one table, against
     * Spring's receiver (and the median of the rounds' pairs), and against the consumer without idempotency.
     */
    record Result(double partitionedVsFlat, double vsPeer, double vsPeerMedian, double overhead) {
    }

    private final com.rabbitmq.client.Connection rabbit;
    private final DataSource dataSource;

    LayoutRun(com.rabbitmq.client.Connection rabbit, DataSource dataSource) {
        this.rabbit = rabbit;
        this.dataSource = dataSource;
    }

    Result run() throws Exception {
        if (ROUNDS < 1) {
            throw new IllegalArgumentException("bench.layouts.rounds=" + ROUNDS + ": at least one round");
        }
        if (MESSAGES < 3_000) {
            throw new IllegalArgumentException("bench.layouts.messages=" + MESSAGES + " is too few to time (at least 3000)");
        }
        if (dataSource instanceof AgroalDataSource pool) {
            pool.flush(AgroalDataSource.FlushMode.IDLE); // the connections the main run left open, for the consumers'
        }
        Map<Contender, Process> consumers = new LinkedHashMap<>();
        try (Channel publisher = rabbit.createChannel()) {
            publisher.confirmSelect();
            for (Contender contender : CONTENDERS) {
                consumers.put(contender, start(contender));
            }
            // the last warmed up is the first timed: none of the first round's waits longer than the others' turns
            for (int c = CONTENDERS.size() - 1; c >= 0; c--) {
                warmUp(publisher, CONTENDERS.get(c), consumers.get(CONTENDERS.get(c)));
            }
            Map<Contender, Double> best = new LinkedHashMap<>();
            double[][] rounds = new double[ROUNDS][CONTENDERS.size()];
            for (int round = 0; round < ROUNDS; round++) {
                Map<Contender, Double> rates = new LinkedHashMap<>();
                for (int c = 0; c < CONTENDERS.size(); c++) {
                    Contender contender = CONTENDERS.get((round + c) % CONTENDERS.size());
                    rates.put(contender, measure(publisher, contender, consumers.get(contender)));
                }
                System.out.printf(Locale.ROOT, "   default layout, round %d: @Idempotent partitioned by time %.0f msg/s,"
                        + " on one table %.0f, Spring's receiver %.0f, plain %.0f%n", round + 1, rates.get(PARTITIONED),
                        rates.get(FLAT), rates.get(SPRING), rates.get(PLAIN));
                for (int c = 0; c < CONTENDERS.size(); c++) {
                    rounds[round][c] = rates.get(CONTENDERS.get(c));
                }
                rates.forEach((contender, rate) -> best.merge(contender, rate, Math::max));
            }
            int partitioned = CONTENDERS.indexOf(PARTITIONED);
            int spring = CONTENDERS.indexOf(SPRING);
            double median = Benchmark.medianOfPairs("@Idempotent partitioned against Spring's receiver", rounds,
                    r -> rounds[r][partitioned], r -> rounds[r][spring]);
            Result result = new Result(best.get(PARTITIONED) / best.get(FLAT), best.get(PARTITIONED) / best.get(SPRING),
                    median, best.get(PARTITIONED) / best.get(PLAIN));
            System.out.printf(Locale.ROOT, "8. the default layout: each consumer in a process of its own, warmed up %d s,"
                    + " %d messages per run, at best: @Idempotent partitioned by time %.0f msg/s, on one table %.0f"
                    + " (partitioned/one table %.2f), Spring's receiver %.0f (@Idempotent/Spring %.2f, median of the"
                    + " rounds %.2f), plain %.0f (@Idempotent/plain %.2f)%n", WARMUP_SECONDS, MESSAGES,
                    best.get(PARTITIONED), best.get(FLAT), result.partitionedVsFlat(), best.get(SPRING), result.vsPeer(),
                    result.vsPeerMedian(), best.get(PLAIN), result.overhead());
            return result;
        } finally {
            for (Process consumer : consumers.values()) {
                consumer.destroy();
                if (!consumer.waitFor(30, TimeUnit.SECONDS)) {
                    consumer.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            }
            // what the consumers held when they stopped goes back to their queues: gone with them
            for (Contender contender : CONTENDERS) {
                deleteQueues(contender);
                execute("DROP SCHEMA IF EXISTS " + contender.schema() + " CASCADE");
            }
        }
    }

    /**
     * The consumer, on its queue kept full for the warm-up's seconds; then paused, its queue emptied, and its table
     * analysed, as autovacuum does after a table's first rows (this machine's server runs without autovacuum, and plans
     * made while the table was empty would otherwise stay).
     */
    private void warmUp(Channel publisher, Contender contender, Process consumer) throws Exception {
        command(consumer, "resume");
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WARMUP_SECONDS);
        while (System.nanoTime() < end) {
            if (ready(contender) < BATCH) {
                publish(publisher, contender, BATCH);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        command(consumer, "pause");
        // the queue emptied; what the paused consumer holds (its prefetch) it handles when next resumed, before the
        // measurement's window opens
        publisher.queuePurge(contender.queue());
        TimeUnit.SECONDS.sleep(1);
        analyze(contender.schema());
    }

    /** @return the consumer's rate on a queue of {@link #MESSAGES} published while it was paused */
    private double measure(Channel publisher, Contender contender, Process consumer) throws Exception {
        publisher.queuePurge(contender.queue());
        publish(publisher, contender, MESSAGES);
        // both ends with the prefetch full: the window opens once the consumer has taken more than its prefetch
        long from = Math.min((long) (MESSAGES * 0.9), MESSAGES - 4L * PREFETCH);
        long to = (long) (MESSAGES * 0.1);
        command(consumer, "resume");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        long[] first = null;
        long[] last;
        while (true) {
            long nanos = System.nanoTime();
            long ready = ready(contender);
            if (first == null && ready <= from) {
                first = new long[] { nanos, ready };
            }
            if (ready <= to) {
                last = new long[] { nanos, ready };
                break;
            }
            alive(contender, consumer, deadline, ready);
            TimeUnit.MILLISECONDS.sleep(50);
        }
        command(consumer, "pause");
        while (ready(contender) > 0) { // the rest, so that the next run starts from an empty queue
            alive(contender, consumer, deadline, ready(contender));
            command(consumer, "resume");
            TimeUnit.MILLISECONDS.sleep(200);
            command(consumer, "pause");
        }
        TimeUnit.SECONDS.sleep(1);
        long deadLettered = deadLettered(contender);
        if (deadLettered > 0) { // a failing handler's messages leave the queue too: its rate would mean nothing
            throw new IllegalStateException("the " + contender.name() + " consumer dead-lettered " + deadLettered
                    + " messages; see " + log(contender));
        }
        if (last[0] <= first[0]) {
            throw new IllegalStateException("the " + contender.name() + " consumer's run was too short to time ("
                    + MESSAGES + " messages); raise bench.layouts.messages");
        }
        return (first[1] - last[1]) / ((last[0] - first[0]) / 1e9);
    }

    /** Fails a measurement whose consumer died or stopped consuming, naming its log. */
    private static void alive(Contender contender, Process consumer, long deadline, long ready) {
        if (!consumer.isAlive()) {
            throw new IllegalStateException("the " + contender.name() + " consumer exited; see " + log(contender));
        }
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException("the " + contender.name() + " consumer did not consume " + MESSAGES
                    + " messages in 300 s (" + ready + " left); see " + log(contender));
        }
    }

    /** Starts a contender's consumer, paused, on a fresh schema (its tables: the extension's in its layout, the peer's). */
    private Process start(Contender contender) throws Exception {
        deleteQueues(contender); // an interrupted run's, perhaps declared otherwise
        execute("DROP SCHEMA IF EXISTS " + contender.schema() + " CASCADE");
        execute("CREATE SCHEMA " + contender.schema());
        execute("CREATE TABLE " + contender.schema() + ".bench_row (LIKE public.bench_row INCLUDING ALL)");
        String jdbc = ConfigProvider.getConfig().getValue("quarkus.datasource.jdbc.url", String.class);
        String reactive = ConfigProvider.getConfig().getValue("quarkus.datasource.reactive.url", String.class);
        List<String> properties = new ArrayList<>();
        // the extension's settings this run was given (-Dquarkus.idempotency.database.partition-period=24h), for every
        // consumer: the contender's own below come later, and win
        System.getProperties().stringPropertyNames().stream().filter(name -> name.startsWith("quarkus.idempotency."))
                .sorted().forEach(name -> properties.add("-D" + name + "=" + System.getProperty(name)));
        properties.addAll(List.of("-D" + RecoveryRun.CONTROLLED + "=true",
                // the consumer's tables in its schema; the extension creates its table, in the contender's layout
                "-Dquarkus.datasource.jdbc.url=" + jdbc + (jdbc.contains("?") ? "&" : "?") + "currentSchema="
                        + contender.schema(),
                "-Dquarkus.datasource.reactive.url=" + reactive + (reactive.contains("?") ? "&" : "?") + "search_path="
                        + contender.schema(),
                "-Dquarkus.idempotency.database.schema-management=update",
                "-Dquarkus.idempotency.database.partitioning=" + contender.partitioning(),
                // four consumer processes and this one within PostgreSQL's 100 connections (its default): on two cores
                // a dozen handlers' transactions at once keep the consumer busy
                "-Dquarkus.datasource.jdbc.max-size=" + CONNECTIONS, "-Dquarkus.datasource.reactive.max-size=2",
                // a message its handler failed goes to a dead-letter queue, where the run looks for it (the peers'
                // channels have none in the main run)
                "-Dmp.messaging.incoming." + contender.channel() + ".auto-bind-dlq=true",
                "-Dmp.messaging.incoming." + contender.channel() + ".dlx.declare=true"));
        Process process = ConsumerProcess.start(contender.channel(), contender.queue(), properties, log(contender));
        ready(contender); // declared by the consumer once connected
        return process;
    }

    private static Path log(Contender contender) {
        return ConsumerProcess.log("layout-" + contender.name());
    }

    private static void command(Process consumer, String command) throws IOException {
        OutputStream in = consumer.getOutputStream();
        in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    private void deleteQueues(Contender contender) throws Exception {
        try (Channel c = rabbit.createChannel()) {
            c.queueDelete(contender.queue());
            c.queueDelete(contender.queue() + ".dlq");
        }
    }

    /** @return the messages in the contender's dead-letter queue */
    private long deadLettered(Contender contender) throws Exception {
        try (Channel c = rabbit.createChannel()) {
            return c.queueDeclarePassive(contender.queue() + ".dlq").getMessageCount();
        }
    }

    /** @return the messages ready in the contender's queue, once the consumer has declared it */
    private long ready(Contender contender) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Channel c = rabbit.createChannel()) {
                return c.queueDeclarePassive(contender.queue()).getMessageCount();
            } catch (IOException notDeclaredYet) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the " + contender.name() + " consumer did not declare "
                            + contender.queue() + "; see " + log(contender), notDeclaredYet);
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    private long published;

    private void publish(Channel publisher, Contender contender, int messages) throws Exception {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("text/plain").deliveryMode(2)
                .headers(Map.of()).build();
        for (int i = 0; i < messages; i++) {
            String id = "layout-" + run + "-" + published++;
            publisher.basicPublish("", contender.queue(), props.builder().messageId(id).build(),
                    id.getBytes(StandardCharsets.UTF_8));
            if (i % BATCH == BATCH - 1) {
                publisher.waitForConfirmsOrDie(60_000);
            }
        }
        publisher.waitForConfirmsOrDie(60_000);
    }

    /** Gathers the statistics of the schema's tables (the extension's or the peer's, the consumer's rows). */
    private void analyze(String schema) throws Exception {
        List<String> tables = new ArrayList<>();
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT format('%I.%I', schemaname, tablename) FROM pg_tables"
                        + " WHERE schemaname = '" + schema + "'")) {
            while (rs.next()) {
                tables.add(rs.getString(1));
            }
        }
        for (String table : tables) {
            execute("ANALYZE " + table);
        }
    }

    private void execute(String sql) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
