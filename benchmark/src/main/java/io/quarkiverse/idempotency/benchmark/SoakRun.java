package io.quarkiverse.idempotency.benchmark;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;

/**
 * The soak: the default {@code @Idempotent} consumer at full speed for a long time with a short retention, so that the
 * key table reaches its steady state (rate x retention keys) early and the purge job runs many cycles; once on a table
 * partitioned by time, once on an unpartitioned one. The consumer is a child process of this jar (the recovery
 * measurement's consumer role) with the extension's purge job on; this process keeps its queue full and samples the
 * table. Prints one {@code SOAK} line per store.
 */
final class SoakRun {

    static final long SECONDS = Long.getLong("bench.soak.seconds", 15 * 60);
    /**
     * The stores in the order they run ({@code -Dbench.soak.stores=unpartitioned,partitioned} for the other order: the
     * machine's pace drifts over a long run, and the first store is the one that meets a cold server).
     */
    static final List<String> STORES = List.of(System.getProperty("bench.soak.stores", "partitioned,unpartitioned")
            .split(","));
    static final Duration RETENTION = Duration.ofSeconds(Long.getLong("bench.soak.retention-seconds", 120));
    /** A partition per quarter of the retention (the default). */
    static final Duration PERIOD = RETENTION.dividedBy(4);
    /** How often the purge job runs, for both stores: a sixth of a period. */
    static final Duration PURGE_EVERY = PERIOD.dividedBy(6);
    private static final String CHANNEL = "idempotent";
    private static final String QUEUE = "bench-soak-live";
    private static final String TABLE = "idempotency_record";
    /** The queue is refilled up to this many ready messages whenever it falls below half. */
    private static final int DEPTH = 20_000;
    private static final Duration SAMPLE = Duration.ofSeconds(5);

    /** One sample of the consumer and the table. */
    record Sample(long nanos, long consumed, long tableBytes, long deadTuples, double purgeLagSeconds) {
    }

    /** The soak's warm-up: a sixth of it, at most 30 s (the JIT, the pools, the first partitions). */
    static final long WARMUP_SECONDS = Math.min(30, SECONDS / 6);

    /** What a run measured: its samples, the WAL it wrote, the table's bytes per row. */
    record Result(List<Sample> samples, long walBytes, double bytesPerRow) {

        /** @return messages consumed per second between the first and the last sample */
        double rate() {
            Sample first = samples.get(0);
            Sample last = samples.get(samples.size() - 1);
            return (last.consumed() - first.consumed()) / ((last.nanos() - first.nanos()) / 1e9);
        }
    }

    private final com.rabbitmq.client.Connection rabbit;
    private final DataSource dataSource;
    private long published;

    SoakRun(com.rabbitmq.client.Connection rabbit, DataSource dataSource) {
        this.rabbit = rabbit;
        this.dataSource = dataSource;
    }

    /** Both stores, one after the other; returns their SOAK lines. */
    List<String> run() throws Exception {
        for (String store : STORES) {
            if (!store.equals("partitioned") && !store.equals("unpartitioned")) {
                throw new IllegalArgumentException("bench.soak.stores takes partitioned and unpartitioned, not '" + store
                        + "'");
            }
        }
        List<String> lines = new ArrayList<>();
        // as in production: dead rows reclaimed and statistics renewed as the table changes
        try (Autovacuum autovacuum = Autovacuum.on()) {
            for (String store : STORES) {
                Result result = run(store);
                String line = line(store, result.samples(), result.walBytes(), result.bytesPerRow());
                System.out.println(line);
                lines.add(line);
            }
        }
        return lines;
    }

    /**
     * The default consumer in a process of its own on a fresh key table of a layout, its queue kept full.
     *
     * @param store {@code partitioned} (by time) or {@code unpartitioned}
     */
    Result run(String store) throws Exception {
        execute("DROP TABLE IF EXISTS " + TABLE + " CASCADE");
        execute("TRUNCATE bench_row");
        execute("CHECKPOINT");
        published = 0;
        Process consumer = start(store);
        // the consumer declares its queue once connected
        for (boolean declared = false; !declared;) {
            try (Channel c = rabbit.createChannel()) {
                c.queuePurge(QUEUE);
                declared = true;
            } catch (java.io.IOException notYet) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
        try (Channel publisher = rabbit.createChannel()) {
            publisher.confirmSelect();
            refill(publisher);
            // the consumer's warm-up: the JIT, the pools, the first partitions
            long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(WARMUP_SECONDS);
            while (System.nanoTime() < warmupEnd) {
                refill(publisher);
                TimeUnit.MILLISECONDS.sleep(200);
            }
            long walStart = walLsn();
            Sample first = sample();
            List<Sample> samples = new ArrayList<>(List.of(first));
            double bytesPerRow = 0;
            long end = first.nanos() + TimeUnit.SECONDS.toNanos(SECONDS);
            long next = first.nanos() + SAMPLE.toNanos();
            while (System.nanoTime() < end) {
                refill(publisher);
                if (System.nanoTime() >= next) {
                    Sample s = sample();
                    if (s.consumed() <= samples.get(samples.size() - 1).consumed()) {
                        printStall(store);
                    }
                    samples.add(s);
                    next += SAMPLE.toNanos();
                    if (bytesPerRow == 0
                            && s.nanos() - first.nanos() >= RETENTION.toNanos() / 2) {
                        bytesPerRow = bytesPerRow(); // before any key expired: rows as written, no dead ones
                    }
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
            Sample last = sample();
            samples.add(last);
            long wal = walLsn() - walStart;
            if (bytesPerRow == 0) {
                bytesPerRow = bytesPerRow();
            }
            return new Result(samples, wal, bytesPerRow);
        } finally {
            consumer.destroy();
            consumer.waitFor(30, TimeUnit.SECONDS);
            consumer.destroyForcibly();
        }
    }

    private String line(String store, List<Sample> samples, long walBytes, double bytesPerRow) {
        Sample first = samples.get(0);
        Sample last = samples.get(samples.size() - 1);
        long third = (last.nanos() - first.nanos()) / 3;
        double rateFirst = rate(samples, first.nanos(), first.nanos() + third);
        double rateLast = rate(samples, last.nanos() - third, last.nanos());
        double rate = new Result(samples, walBytes, bytesPerRow).rate();
        double tableMbMax = samples.stream().mapToLong(Sample::tableBytes).max().orElse(0) / 1e6;
        long deadMax = samples.stream().mapToLong(Sample::deadTuples).max().orElse(0);
        double lagMax = samples.stream().mapToDouble(Sample::purgeLagSeconds).max().orElse(0);
        double boundMb = rate * (RETENTION.toSeconds() + PERIOD.toSeconds()) * bytesPerRow / 1e6;
        long messages = last.consumed() - first.consumed();
        return String.format(Locale.ROOT, "SOAK store=%s minutes=%.1f retention_s=%d period_s=%d purge_every_s=%d rate=%.0f"
                + " rate_first=%.0f rate_last=%.0f flat=%.2f table_mb_max=%.1f bound_mb=%.1f bytes_row=%.0f"
                + " wal_bytes_msg=%.0f dead_tuples_max=%d purge_lag_s=%.1f",
                store, SECONDS / 60.0, RETENTION.toSeconds(), PERIOD.toSeconds(), PURGE_EVERY.toSeconds(), rate, rateFirst,
                rateLast,
                rateLast / rateFirst, tableMbMax, boundMb, bytesPerRow, messages == 0 ? 0 : (double) walBytes / messages,
                deadMax, lagMax);
    }

    // Messages consumed per second between two instants: from the last sample at or before the first to the first
    // sample at or after the second.
    private static double rate(List<Sample> samples, long from, long to) {
        Sample a = samples.get(0);
        Sample b = samples.get(samples.size() - 1);
        for (Sample s : samples) {
            if (s.nanos() <= from) {
                a = s;
            }
        }
        for (int i = samples.size() - 1; i >= 0; i--) {
            if (samples.get(i).nanos() >= to) {
                b = samples.get(i);
            }
        }
        return (b.consumed() - a.consumed()) / ((b.nanos() - a.nanos()) / 1e9);
    }

    private Sample sample() throws Exception {
        long ready;
        try (Channel c = rabbit.createChannel()) {
            ready = c.queueDeclarePassive(QUEUE).getMessageCount();
        }
        long nanos = System.nanoTime();
        // the table and its partitions (a partitioned table's own size is 0)
        String relations = "(SELECT '" + TABLE + "'::regclass AS oid UNION ALL SELECT inhrelid FROM pg_inherits"
                + " WHERE inhparent = '" + TABLE + "'::regclass)";
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            long bytes = single(s, "SELECT coalesce(sum(pg_total_relation_size(oid)), 0) FROM " + relations + " r");
            long dead = single(s, "SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables WHERE relid IN (SELECT oid"
                    + " FROM " + relations + " r)");
            double lag;
            try (ResultSet rs = s.executeQuery("SELECT coalesce(extract(epoch FROM now() - min(expires_at)), 0)"
                    + " FROM " + TABLE + " WHERE expires_at < now()")) {
                rs.next();
                lag = rs.getDouble(1);
            }
            // consumed: published less what is still queued (the prefetch in flight is within a second's work)
            return new Sample(nanos, published - ready, bytes, dead, lag);
        }
    }

    /**
     * A sample without progress: prints what the database's sessions are doing (state, what they wait for, their
     * statement), one {@code SOAK-STALL} line each, so that a stalled run says why.
     */
    private void printStall(String store) throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pid, state, wait_event_type, wait_event,"
                        + " extract(epoch FROM now() - xact_start), left(regexp_replace(query, '\\s+', ' ', 'g'), 160)"
                        + " FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                        + " AND backend_type = 'client backend' ORDER BY xact_start NULLS LAST")) {
            while (rs.next()) {
                System.out.printf(Locale.ROOT, "SOAK-STALL store=%s pid=%d state=%s wait=%s/%s xact_s=%.1f query=%s%n", store,
                        rs.getInt(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getDouble(5), rs.getString(6));
            }
        }
    }

    private double bytesPerRow() throws Exception {
        String relations = "(SELECT '" + TABLE + "'::regclass AS oid UNION ALL SELECT inhrelid FROM pg_inherits"
                + " WHERE inhparent = '" + TABLE + "'::regclass)";
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            long rows = single(s, "SELECT count(*) FROM " + TABLE);
            long bytes = single(s, "SELECT coalesce(sum(pg_total_relation_size(oid)), 0) FROM " + relations + " r");
            return rows == 0 ? 0 : (double) bytes / rows;
        }
    }

    private long walLsn() throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            return single(s, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
        }
    }

    private void refill(Channel publisher) throws Exception {
        long ready = publisher.queueDeclarePassive(QUEUE).getMessageCount();
        if (ready >= DEPTH / 2) {
            return;
        }
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("text/plain").deliveryMode(2)
                .headers(Map.of()).build();
        for (long i = ready; i < DEPTH; i++) {
            String id = "soak-" + published++;
            publisher.basicPublish("", QUEUE, props.builder().messageId(id).build(), id.getBytes(StandardCharsets.UTF_8));
        }
        publisher.waitForConfirmsOrDie(60_000);
    }

    private Process start(String store) throws Exception {
        return ConsumerProcess.start(CHANNEL, QUEUE, List.of(
                // the extension creates its table, in the layout under test
                "-Dquarkus.idempotency.database.schema-management=update",
                "-Dquarkus.idempotency.database.partitioning=" + (store.equals("partitioned") ? "time" : "none"),
                "-Dquarkus.idempotency.database.partition-period=" + PERIOD.toMillis() + "ms",
                "-Dquarkus.idempotency.retention=" + RETENTION.toSeconds() + "s",
                // a retention of seconds needs a lease and retry delays within it (refused otherwise)
                "-Dquarkus.idempotency.lease=" + RETENTION.dividedBy(4).toMillis() + "ms",
                "-Dquarkus.idempotency.retry.initial-delay=100ms", "-Dquarkus.idempotency.retry.max-delay=1s",
                // the purge job, often: the unpartitioned store deletes at the defaults' pace (busy-percent)
                "-Dquarkus.idempotency.purge.every=" + PURGE_EVERY.toMillis() + "ms"), ConsumerProcess.log("soak-" + store));
    }

    private static long single(Statement s, String sql) throws Exception {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private void execute(String sql) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
