package io.quarkiverse.idempotency.benchmark;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import jakarta.inject.Inject;
import jakarta.transaction.TransactionManager;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.NonBlockingStore;
import io.quarkiverse.idempotency.runtime.Outcome;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.PoolKeys;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;

/**
 * Runs every measurement side by side in one JVM, against the local RabbitMQ and PostgreSQL, and prints ratios (this
 * machine is noisy: absolute times vary, ratios measured in one run much less). The last line is machine-readable.
 */
@QuarkusMain
public class Benchmark implements QuarkusApplication {

    static final int MESSAGES = Integer.getInteger("bench.messages", 20_000);
    static final int WARMUP = Integer.getInteger("bench.warmup", 10_000);
    static final int STORE_OPS = Integer.getInteger("bench.store-ops", 5_000);
    static final int PURGE_ROWS = Integer.getInteger("bench.purge-rows", 1_000_000);
    static final int ROUNDS = Integer.getInteger("bench.rounds", 5);
    /** The most warm-up passes of a consumer: it is warm once a pass is no faster (by 3%) than its best one before. */
    static final int WARMUP_PASSES = Integer.getInteger("bench.warmup-passes", 5);
    /** Only these consumers (comma-separated), their best runs printed and nothing else: for a quick look. */
    /** The first of the peers' consumers in the list of kinds, and the experiment after them. */
    static final int FIRST_PEER = 7;
    static final int FLUSH = 10;
    static final int IDEMPOTENT_FLUSH = 11;
    /** The reactive consumers: Hibernate Reactive without the extension, and with it. */
    static final int PLAIN_REACTIVE = 12;
    static final int IDEMPOTENT_REACTIVE = 13;
    static final int HAND_WRITTEN_REACTIVE = 14;
    static final int PLAIN_EVENT_LOOP = 15;
    static final int IDEMPOTENT_EVENT_LOOP = 16;
    static final int PLAIN_SEND = 17;
    static final int IDEMPOTENT_OUTBOX = 18;
    static final List<String> ONLY = System.getProperty("bench.only") == null ? null
            : List.of(System.getProperty("bench.only").split(","));
    /** the flat-out purge's batch: the extension's default batch size */
    static final int BATCH = 10_000;

    @Inject
    Consumers consumers;

    @Inject
    ReactiveConsumers reactive;

    @Inject
    OutcomeCounter outcomes;

    @Inject
    ChannelRegistry channels;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    TransactionManager transactions;

    @Inject
    DatabaseIdempotencyStore store;

    /** the same statements as the store's, bound and run by hand */
    @Inject
    HandWritten hand;

    @Inject
    NonBlockingStore nonBlocking;

    @Inject
    IdempotencyPurge purge;

    @Inject
    Peers peers;

    @Inject
    Outbox outbox;

    private com.rabbitmq.client.Connection rabbit;

    private Channel publisher;

    @Override
    public int run(String... args) throws Exception {
        if (RecoveryRun.consumerRole() != null) {
            return RecoveryRun.consume(channels); // a child process of the recovery measurement
        }
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(System.getenv().getOrDefault("RABBITMQ_HOST", "127.0.0.1"));
        rabbit = factory.newConnection("idempotency-benchmark");
        if (Arrays.asList(args).contains("soak")) {
            System.out.printf("Soak: the default @Idempotent consumer for %d s per store, retention %d s%n",
                    SoakRun.SECONDS, SoakRun.RETENTION.toSeconds());
            new SoakRun(rabbit, dataSource).run();
            rabbit.close();
            return 0;
        }
        if (Arrays.asList(args).contains("layouts")) {
            LayoutRun.Result layouts = new LayoutRun(rabbit, dataSource).run();
            System.out.printf(java.util.Locale.ROOT, "LAYOUTS partitioned_vs_flat=%.2f overhead_default=%.2f"
                    + " vs_peer_default=%.2f vs_peer_default_median=%.2f%n", layouts.partitionedVsFlat(),
                    layouts.overhead(), layouts.vsPeer(), layouts.vsPeerMedian());
            rabbit.close();
            return 0;
        }
        // The connector declares the queues once connected; leftovers of an earlier run are purged.
        List<Kind> kinds = List.of(
                new Kind("plain", () -> consumers.plain.get()),
                new Kind("idempotent", () -> consumers.idempotent.get()),
                new Kind("lease", () -> consumers.lease.get()),
                new Kind("hand-written", () -> consumers.handWritten.get()),
                new Kind("hand-written-lease", () -> consumers.handWrittenLease.get()),
                new Kind("plain-nontx", () -> consumers.plainNoTransaction.get()),
                new Kind("idempotent-nontx", () -> consumers.idempotentNoTransaction.get()),
                new Kind("camel-jdbc", () -> consumers.camel.get()),
                new Kind("camel-orphan-lock", () -> consumers.camelOrphanLock.get()),
                new Kind("spring-metadata", () -> consumers.spring.get()),
                new Kind("hand-written-flush", () -> consumers.handWrittenFlush.get()),
                new Kind("idempotent-flush", () -> consumers.idempotentFlush.get()),
                new Kind("plain-reactive", () -> reactive.plain.get()),
                new Kind("idempotent-reactive", () -> reactive.idempotent.get()),
                new Kind("hand-written-reactive", () -> reactive.handWritten.get()),
                new Kind("plain-eventloop", () -> reactive.plainEventLoop.get()),
                new Kind("idempotent-eventloop", () -> reactive.idempotentEventLoop.get()),
                // each pipeline done once handled and its message sent, as an outbox message is once confirmed: the
                // pipeline's whole work (counting the plain emitter's consumption alone timed messages still in its
                // buffer, whose sending the next run paid for)
                new Kind("plain-send", () -> Math.min(consumers.plainSend.get(), consumers.plainSent.get())),
                new Kind("idempotent-outbox", () -> Math.min(consumers.idempotentOutbox.get(), outbox.counts().sentAtOnce()
                        + outbox.counts().relayed())));
        for (Kind kind : kinds) {
            purgeQueue("bench-" + kind.channel());
        }
        publisher = rabbit.createChannel();
        publisher.confirmSelect();
        System.out.printf("Benchmark: %d messages per run, %d rounds, %d warm-up, %d store operations, %d rows to"
                + " purge%n", MESSAGES, ROUNDS, WARMUP, STORE_OPS, PURGE_ROWS);

        // Warm-up: every path until the JIT is done with it: twice over, then again while a pass still runs faster
        // than every pass of it before (measured: before that, a run's CPU per message falls from round to round and
        // the order of the runs decides the ratios; the asynchronous-commit consumer, the longest path, went on getting
        // faster after two passes of 10,000: its best round then 0.87-0.89 of its floor's, after two of 20,000 1.08).
        double[] warmest = new double[kinds.size()];
        boolean[] warm = new boolean[kinds.size()];
        for (int pass = 0; pass < WARMUP_PASSES; pass++) {
            for (int k = 0; k < kinds.size(); k++) {
                Kind kind = kinds.get(k);
                if (warm[k] || (ONLY != null && !ONLY.contains(kind.channel()))) {
                    continue;
                }
                double rate = consume(kind.channel(), "bench-" + kind.channel(), WARMUP, ids(WARMUP), kind.done()).rate();
                warm[k] = pass > 0 && rate < warmest[k] * 1.03;
                warmest[k] = Math.max(warmest[k], rate);
            }
        }
        analyze();

        // 1. Overhead: rounds of every consumer, in a rotating order (the tables grow as runs go by); the best of
        // each kind, which is the least disturbed by the rest of this shared machine.
        Run[] bestRuns = new Run[kinds.size()];
        // every run's rate, by round and kind: the pairs of one round ran minutes apart at most, on the same JIT state
        double[][] rates = new double[ROUNDS][kinds.size()];
        long[] nonTransactionalBatches = new long[4];
        List<String> lastIdempotentIds = null;
        for (int round = 0; round < ROUNDS; round++) {
            for (int k = 0; k < kinds.size(); k++) {
                int index = (round + k) % kinds.size();
                Kind kind = kinds.get(index);
                if (ONLY != null && !ONLY.contains(kind.channel())) {
                    continue;
                }
                if (kind.channel().equals("idempotent-outbox")) {
                    vacuumOutbox();
                }
                List<String> ids = ids(MESSAGES);
                long[] batchesBefore = store.leaseBatchStatistics();
                long[] flushesBefore = flushStatistics(index);
                Run run = consume(kind.channel(), "bench-" + kind.channel(), MESSAGES, ids, kind.done());
                if (flushesBefore != null) {
                    long[] flushesAfter = flushStatistics(index);
                    System.out.printf("     its WAL flushes: %d, %.1f deliveries each%n", flushesAfter[0] - flushesBefore[0],
                            (flushesAfter[1] - flushesBefore[1]) / (double) Math.max(1, flushesAfter[0] - flushesBefore[0]));
                }
                if (index == 6) {
                    long[] batchesAfter = store.leaseBatchStatistics();
                    for (int i = 0; i < 4; i++) {
                        nonTransactionalBatches[i] += batchesAfter[i] - batchesBefore[i];
                    }
                }
                if (index == 1) {
                    lastIdempotentIds = ids;
                }
                rates[round][index] = run.rate();
                if (bestRuns[index] == null || run.rate() > bestRuns[index].rate()) {
                    bestRuns[index] = run;
                }
            }
        }
        System.out.println("   each kind's best run:");
        for (int k = 0; k < kinds.size(); k++) {
            if (bestRuns[k] == null) {
                continue;
            }
            System.out.printf("     %-28s %5.0f msg/s; %s%n", kinds.get(k).channel(), bestRuns[k].rate(),
                    CpuMeter.describe(bestRuns[k].cpu()));
        }
        long[] eventLoopBatches = ((PoolKeys) nonBlocking.keys()).batchStatistics();
        if (ONLY != null) {
            if (ONLY.contains(kinds.get(FLUSH).channel()) && ONLY.contains(kinds.get(IDEMPOTENT_FLUSH).channel())) {
                medianOfPairs("asynchronous-commit @Idempotent against its statements by hand", rates,
                        r -> rates[r][IDEMPOTENT_FLUSH], r -> rates[r][FLUSH]);
            }
            // the pairs of the main figures, for the consumers run
            for (int k : new int[] { 0, 3, FIRST_PEER, FIRST_PEER + 1, FIRST_PEER + 2 }) {
                if (ONLY.contains(kinds.get(1).channel()) && ONLY.contains(kinds.get(k).channel())) {
                    medianOfPairs("@Idempotent against " + kinds.get(k).channel(), rates, r -> rates[r][1],
                            r -> rates[r][k]);
                }
            }
            System.out.printf("   lease-mode batches without a transaction: %d claims in %d statements, %d confirms in"
                    + " %d%n", nonTransactionalBatches[1], nonTransactionalBatches[0], nonTransactionalBatches[3],
                    nonTransactionalBatches[2]);
            System.out.printf("   on the event loop (warm-up included): %d claims in %d statements, %d confirms in %d%n",
                    eventLoopBatches[1], eventLoopBatches[0], eventLoopBatches[3], eventLoopBatches[2]);
            rabbit.close();
            return 0;
        }
        double plain = bestRuns[0].rate();
        double idempotent = bestRuns[1].rate();
        double lease = bestRuns[2].rate();
        double overhead = idempotent / plain;
        double overheadBest = Math.max(idempotent, lease) / plain;
        double overheadNoTransaction = bestRuns[6].rate() / bestRuns[5].rate();
        System.out.printf("1. overhead: plain %.0f msg/s, @Idempotent %.0f msg/s (ratio %.2f), its lease mode %.0f"
                + " msg/s (ratio %.2f)%n", plain, idempotent, overhead, lease, lease / plain);
        System.out.printf("   the floor, the same statements by hand: %.0f msg/s (ratio %.2f), lease mode %.0f msg/s"
                + " (ratio %.2f)%n", bestRuns[3].rate(), bestRuns[3].rate() / plain, bestRuns[4].rate(),
                bestRuns[4].rate() / plain);
        System.out.printf("   without a transaction: plain %.0f msg/s, @Idempotent %.0f msg/s (ratio %.2f)%n",
                bestRuns[5].rate(), bestRuns[6].rate(), overheadNoTransaction);
        double claimsPerBatch = nonTransactionalBatches[1] / (double) Math.max(1, nonTransactionalBatches[0]);
        double confirmsPerBatch = nonTransactionalBatches[3] / (double) Math.max(1, nonTransactionalBatches[2]);
        System.out.printf("   its lease-mode batches: %.1f claims per statement and commit, %.1f confirms (%d and %d"
                + " statements for %d messages)%n", claimsPerBatch, confirmsPerBatch, nonTransactionalBatches[0],
                nonTransactionalBatches[2], nonTransactionalBatches[1]);
        double flushFloor = bestRuns[FLUSH].rate() / plain;
        double overheadFlush = bestRuns[IDEMPOTENT_FLUSH].rate() / plain;
        System.out.printf("   asynchronous-commit (acked after a shared WAL flush): @Idempotent %.0f msg/s (ratio %.2f;"
                + " %.2f of the default mode), its statements by hand %.0f msg/s (ratio %.2f)%n",
                bestRuns[IDEMPOTENT_FLUSH].rate(), overheadFlush, bestRuns[IDEMPOTENT_FLUSH].rate() / idempotent,
                bestRuns[FLUSH].rate(), flushFloor);
        double overheadReactive = bestRuns[IDEMPOTENT_REACTIVE].rate() / bestRuns[PLAIN_REACTIVE].rate();
        System.out.printf("   reactive (Hibernate Reactive, @WithTransaction, on the event loop): plain %.0f msg/s,"
                + " @Idempotent %.0f msg/s (ratio %.2f), its statement by hand %.0f msg/s (ratio %.2f)%n",
                bestRuns[PLAIN_REACTIVE].rate(), bestRuns[IDEMPOTENT_REACTIVE].rate(), overheadReactive,
                bestRuns[HAND_WRITTEN_REACTIVE].rate(),
                bestRuns[HAND_WRITTEN_REACTIVE].rate() / bestRuns[PLAIN_REACTIVE].rate());
        double overheadEventLoop = bestRuns[IDEMPOTENT_EVENT_LOOP].rate() / bestRuns[PLAIN_EVENT_LOOP].rate();
        double overheadOutbox = bestRuns[IDEMPOTENT_OUTBOX].rate() / bestRuns[PLAIN_SEND].rate();
        System.out.printf("1e. consume -> insert -> send: a plain emitter in the transaction %.0f msg/s, @Idempotent and"
                + " the outbox %.0f msg/s (ratio %.2f)%n", bestRuns[PLAIN_SEND].rate(), bestRuns[IDEMPOTENT_OUTBOX].rate(),
                overheadOutbox);
        System.out.printf("   on the event loop without a transaction (the reactive client, lease mode): plain %.0f msg/s,"
                + " @Idempotent %.0f msg/s (ratio %.2f)%n", bestRuns[PLAIN_EVENT_LOOP].rate(),
                bestRuns[IDEMPOTENT_EVENT_LOOP].rate(), overheadEventLoop);
        double peerBest = 0;
        for (int k = FIRST_PEER; k < FLUSH; k++) {
            double ratio = bestRuns[k].rate() / plain;
            peerBest = Math.max(peerBest, ratio);
            System.out.printf("   peer %s: %.0f msg/s (ratio %.2f)%n", kinds.get(k).channel(), bestRuns[k].rate(), ratio);
        }

        // The same ratios round by round: each round's pair ran on the same JIT state and the same table sizes, so a
        // consumer the JIT finished first (or a round the machine was busy) does not decide them as best runs can.
        double vsPeerMedian = medianOfPairs("@Idempotent against the fastest peer of the round", rates,
                r -> rates[r][1], r -> {
                    double fastest = 0;
                    for (int k = FIRST_PEER; k < FLUSH; k++) {
                        fastest = Math.max(fastest, rates[r][k]);
                    }
                    return fastest;
                });
        double flushVsFloorMedian = medianOfPairs("asynchronous-commit @Idempotent against its statements by hand", rates,
                r -> rates[r][IDEMPOTENT_FLUSH], r -> rates[r][FLUSH]);

        // 2. Duplicates: the last idempotent run's messages again, all already confirmed.
        double duplicates = consume("idempotent", "bench-idempotent", MESSAGES, lastIdempotentIds,
                () -> outcomes.count("idempotent", Outcome.DUPLICATE)).rate();
        System.out.printf("2. duplicates: %.0f msg/s, first deliveries %.0f msg/s (ratio %.2f)%n", duplicates,
                idempotent, duplicates / idempotent);

        // 3. Store cost: claim + confirm through the extension's store vs the same statements in plain JDBC.
        double[] store = storeCost();
        System.out.printf("3. store: lease-mode claim+confirm %.0f us through the extension, %.0f us hand-written JDBC"
                + " (ratio %.2f); %.0f us with asynchronous-claim-commit%n", store[0] / 1000, store[1] / 1000,
                store[0] / store[1], store[2] / 1000);

        // 4. Memory store: nanoseconds added per message.
        double memoryNs = memoryStoreNanos();
        System.out.printf("4. memory store: %.0f ns per message (claim + confirm)%n", memoryNs);

        // 5. Purge: rows per second on expired rows, and consumer throughput while it runs.
        double[] purged = purge();
        System.out.printf("5. purge: %.0f rows/s over %d expired rows as configured (%.0f rows/s flat out); consumer"
                + " %.0f msg/s while purging vs %.0f without (ratio %.2f)%n", purged[0], PURGE_ROWS, purged[3],
                purged[1], purged[2], purged[1] / purged[2]);

        // 6. Recovery: a consumer process with the defaults, killed with SIGKILL while its messages are in flight.
        RecoveryRun.Result recovery = new RecoveryRun(rabbit, dataSource).run(RecoveryRun.TRANSACTIONAL);
        RecoveryRun.Result recoveryLease = new RecoveryRun(rabbit, dataSource).run(RecoveryRun.WITHOUT_TRANSACTION);
        System.out.printf("6. recovery: killed with %d of %d messages unhandled, %d handlers running; restarted, all"
                + " handled %.1f s after the restart (@Transactional handler); without a transaction (lease mode),"
                + " %d handlers running: %.1f s%n", recovery.inFlight(), RecoveryRun.MESSAGES, recovery.heldAtKill(),
                recovery.seconds(), recoveryLease.heldAtKill(), recoveryLease.seconds());

        // 7. The faults, for every consumer's idempotency: a concurrent duplicate, a crash before the work commits.
        System.out.println("7. faults:");
        for (PeerFaults.Outcome fault : new PeerFaults(peers, this.store).run()) {
            System.out.printf("   %s: a concurrent duplicate %s; after a crash before the work commits, %s%n",
                    fault.consumer(), fault.concurrentDuplicate(), fault.crash());
        }

        // 8. The default layout: the default consumer on a table partitioned by time, on one table, Spring's receiver and
        // plain, each a process (and a schema) of its own.
        LayoutRun.Result layouts = new LayoutRun(rabbit, dataSource).run();

        System.out.printf(java.util.Locale.ROOT,
                "BENCH overhead=%.2f overhead_best=%.2f overhead_nontx=%.2f duplicates=%.2f store=%.2f memory_ns=%.0f"
                        + " purge_rows_s=%.0f purge_impact=%.2f recovery_s=%.1f peer_best=%.2f vs_peer=%.2f"
                        + " vs_peer_median=%.2f claims_per_commit=%.1f overhead_flush=%.2f flush_floor=%.2f"
                        + " flush_vs_floor_median=%.2f"
                        + " overhead_reactive=%.2f reactive_floor=%.2f overhead_eventloop=%.2f overhead_outbox=%.2f"
                        + " partitioned_vs_flat=%.2f overhead_default=%.2f vs_peer_default=%.2f"
                        + " vs_peer_default_median=%.2f%n",
                overhead, overheadBest, overheadNoTransaction, duplicates / idempotent, store[0] / store[1], memoryNs,
                purged[0], purged[1] / purged[2], recovery.seconds(), peerBest, overhead / peerBest, vsPeerMedian,
                claimsPerBatch, overheadFlush, flushFloor, flushVsFloorMedian, overheadReactive,
                bestRuns[HAND_WRITTEN_REACTIVE].rate() / bestRuns[PLAIN_REACTIVE].rate(), overheadEventLoop,
                overheadOutbox, layouts.partitionedVsFlat(), layouts.overhead(), layouts.vsPeer(),
                layouts.vsPeerMedian());
        rabbit.close();
        return 0;
    }

    /**
     * Prints a ratio's pair in each round (both rates, and their ratio) and returns the median of the ratios: half the
     * rounds at least as good, half at most.
     */
    static double medianOfPairs(String what, double[][] rates, java.util.function.IntToDoubleFunction numerator,
            java.util.function.IntToDoubleFunction denominator) {
        double[] ratios = new double[rates.length];
        StringBuilder pairs = new StringBuilder();
        for (int r = 0; r < rates.length; r++) {
            ratios[r] = numerator.applyAsDouble(r) / denominator.applyAsDouble(r);
            pairs.append(String.format(java.util.Locale.ROOT, "%s%.0f/%.0f (%.2f)", r == 0 ? "" : ", ",
                    numerator.applyAsDouble(r), denominator.applyAsDouble(r), ratios[r]));
        }
        java.util.Arrays.sort(ratios);
        int n = ratios.length;
        double median = n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
        System.out.printf(java.util.Locale.ROOT, "   per round, %s: %s; median %.2f%n", what, pairs, median);
        return median;
    }

    private void purgeQueue(String queue) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Channel c = rabbit.createChannel()) {
                c.queuePurge(queue);
                return;
            } catch (java.io.IOException notDeclaredYet) {
                if (System.nanoTime() > deadline) {
                    throw notDeclaredYet;
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    /** A consumer: its channel (its queue is bench-channel) and the count of messages it handled. */
    record Kind(String channel, LongSupplier done) {
    }

    private static List<String> ids(int n) {
        List<String> ids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ids.add(UUID.randomUUID().toString());
        }
        return ids;
    }

    /** One timed run of a consumer: messages per second, and CPU per message by side. */
    /** @return the WAL flushes so far of an asynchronously committing consumer (how many, and deliveries served) */
    private long[] flushStatistics(int kind) {
        return kind == FLUSH ? hand.flushStatistics() : kind == IDEMPOTENT_FLUSH ? store.flushStatistics() : null;
    }

    record Run(double rate, Map<String, Long> cpu) {
    }

    /** Publishes while the channel is paused, then times the consumption. */
    private Run consume(String channel, String queue, int n, List<String> ids, LongSupplier done) throws Exception {
        pausables(channel).forEach(PausableChannel::pause);
        long before = done.getAsLong();
        for (int i = 0; i < n; i++) {
            AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("text/plain")
                    .messageId(ids.get(i)).deliveryMode(2).headers(Map.of()).build();
            publisher.basicPublish("", queue, props, ("payload-" + i).getBytes(StandardCharsets.UTF_8));
        }
        publisher.waitForConfirmsOrDie(60_000);
        CpuMeter.Sample cpu = CpuMeter.sample();
        long start = System.nanoTime();
        pausables(channel).forEach(PausableChannel::resume);
        long progress = done.getAsLong();
        long progressAt = System.nanoTime();
        while (done.getAsLong() - before < n) {
            TimeUnit.MILLISECONDS.sleep(2);
            long now = done.getAsLong();
            if (now != progress) {
                progress = now;
                progressAt = System.nanoTime();
            } else if (System.nanoTime() - progressAt > TimeUnit.SECONDS.toNanos(120)) {
                throw new IllegalStateException("consumer " + channel + " stalled at " + (now - before) + " of " + n
                        + " messages: nothing handled for two minutes (see its errors above)");
            }
        }
        Run run = new Run(n / ((System.nanoTime() - start) / 1e9), CpuMeter.perMessage(cpu, CpuMeter.sample(), n));
        System.out.printf("   %s: %.0f msg/s; %s%n", channel, run.rate(), CpuMeter.describe(run.cpu()));
        return run;
    }

    // The channel, or its copies when it has concurrency=N (channel$1 ... channel$N).
    private List<PausableChannel> pausables(String channel) {
        PausableChannel single = channels.getPausable(channel);
        if (single != null) {
            return List.of(single);
        }
        List<PausableChannel> copies = new java.util.ArrayList<>();
        for (int i = 1; channels.getPausable(channel + "$" + i) != null; i++) {
            copies.add(channels.getPausable(channel + "$" + i));
        }
        if (copies.isEmpty()) {
            throw new IllegalStateException("channel " + channel + " is not pausable");
        }
        return copies;
    }

    /** @return nanoseconds per claim+confirm: [extension, hand-written JDBC, extension with asynchronous claims] */
    private double[] storeCost() throws Exception {
        // the same store with quarkus.idempotency.database.asynchronous-claim-commit
        DatabaseIdempotencyStore asynchronous = new DatabaseIdempotencyStore(dataSource, transactions,
                "idempotency_record", true);
        double[] best = { Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE };
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < 3; k++) {
                int index = (round + k) % 3; // a rotating order, as for the consumers
                String prefix = "store-" + index + "-" + round;
                double nanos = switch (index) {
                    case 0 -> claimAndConfirm(store, prefix);
                    case 1 -> handWrittenClaimAndConfirm(prefix);
                    default -> claimAndConfirm(asynchronous, prefix);
                };
                best[index] = Math.min(best[index], nanos);
            }
        }
        return best;
    }

    /** @return nanoseconds per claim+confirm of the hand-written statements, one after the other on one thread */
    private double handWrittenClaimAndConfirm(String prefix) {
        long start = System.nanoTime();
        for (int i = 0; i < STORE_OPS; i++) {
            String id = "bench-jdbc:" + prefix + "-" + i + "-" + UUID.randomUUID();
            if (!hand.claim(id)) {
                throw new IllegalStateException("unexpected claim outcome");
            }
            hand.confirm(id);
        }
        return (System.nanoTime() - start) / (double) STORE_OPS;
    }

    /** @return nanoseconds per claim+confirm, one after the other on one thread */
    private static double claimAndConfirm(DatabaseIdempotencyStore store, String prefix) {
        Duration retention = Duration.ofHours(24);
        Duration lease = Duration.ofSeconds(30);
        long start = System.nanoTime();
        for (int i = 0; i < STORE_OPS; i++) {
            ScopedKey key = new ScopedKey("bench-store", prefix + "-" + i + "-" + UUID.randomUUID());
            String token = "bench#" + i;
            if (store.claim(key, token, lease, retention).result() != ClaimResult.NEW
                    || !store.confirm(key, token, retention)) {
                throw new IllegalStateException("unexpected claim outcome");
            }
        }
        return (System.nanoTime() - start) / (double) STORE_OPS;
    }

    private static double memoryStoreNanos() {
        InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
        Duration retention = Duration.ofHours(1);
        Duration lease = Duration.ofSeconds(30);
        int ops = 1_000_000;
        ScopedKey[] keys = new ScopedKey[ops];
        for (int i = 0; i < ops; i++) {
            keys[i] = new ScopedKey("bench", "k" + i);
        }
        double[] rounds = new double[7];
        for (int round = 0; round < rounds.length; round++) {
            memory.clear();
            long start = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                memory.claim(keys[i], "bench#1", lease, retention);
                memory.confirm(keys[i], "bench#1", retention);
            }
            rounds[round] = (System.nanoTime() - start) / (double) ops;
        }
        // the first rounds warm the JIT up; the median of the rest
        double[] measured = Arrays.copyOfRange(rounds, 2, rounds.length);
        Arrays.sort(measured);
        return measured[measured.length / 2];
    }

    /**
     * @return [rows purged per second as configured, consumer msg/s while purging, consumer msg/s without, rows purged
     *         per second flat out]
     */
    private double[] purge() throws Exception {
        // flat out: the store's purge statement, batch after batch, without the purge's pauses
        fillExpired(PURGE_ROWS);
        long start = System.nanoTime();
        long flatOut = 0;
        for (int batch = BATCH; batch == BATCH;) {
            batch = store.purgeExpired(BATCH);
            flatOut += batch;
        }
        double flatOutPerSecond = flatOut / ((System.nanoTime() - start) / 1e9);
        // the purge as configured (by default it paces itself: quarkus.idempotency.purge.busy-percent)
        fillExpired(PURGE_ROWS);
        start = System.nanoTime();
        long deleted = purge.purgeExpired();
        double rowsPerSecond = deleted / ((System.nanoTime() - start) / 1e9);
        if (deleted < PURGE_ROWS || flatOut < PURGE_ROWS) {
            throw new IllegalStateException("purged " + deleted + " and " + flatOut + " of " + PURGE_ROWS);
        }

        // the consumer on the same table, without the purge and then while it runs: only the purge differs
        fillExpired(PURGE_ROWS);
        // the consumer sat idle through the purges above (pools shrink, threads retire): warm it up again first
        consume("idempotent", "bench-idempotent", WARMUP, ids(WARMUP), () -> consumers.idempotent.get());
        double without = consume("idempotent", "bench-idempotent", MESSAGES, ids(MESSAGES),
                () -> consumers.idempotent.get()).rate();
        CompletableFuture<Long> purging = CompletableFuture.supplyAsync(purge::purgeExpired);
        double during = consume("idempotent", "bench-idempotent", MESSAGES, ids(MESSAGES),
                () -> consumers.idempotent.get()).rate();
        boolean overlapped = !purging.isDone();
        purging.get();
        if (!overlapped) {
            System.out.println("   (the purge finished before the consumer run did)");
        }
        return new double[] { rowsPerSecond, during, without, flatOutPerSecond };
    }

    /**
     * Vacuums the outbox table, a queue whose every row is deleted within milliseconds of its insert: where autovacuum
     * is off (this machine's PostgreSQL runs so), each run would otherwise carry the dead rows of every run before it,
     * and the outbox's figures would fall from round to round (measured: 53 MB and 329,000 dead rows after a few runs,
     * PostgreSQL's CPU per message tripled). With autovacuum on, as in production, the table is vacuumed as it churns.
     */
    private void vacuumOutbox() throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("VACUUM idempotency_outbox");
        }
    }

    /**
     * Gathers the tables' statistics once the warm-up has filled them, as autovacuum does in production after the first
     * rows of a table (this machine's PostgreSQL runs without it). Without it, a prepared statement's generic plan made
     * while its table held a few rows (a sequential scan) stays for the whole run: measured on the WAL flush's look-up of
     * the keys it confirms, PostgreSQL's CPU per message tripled over the rounds (761 to 2,391 us) and the order in which
     * the consumers first ran decided their ratios. The statistics invalidate every cached plan of these tables.
     */
    private void analyze() throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("ANALYZE");
        }
    }

    private void fillExpired(int rows) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at)"
                    + " SELECT 'expired:' || g || ':' || md5(random()::text), 'expired', CASE WHEN g % 2 = 0 THEN"
                    + " 'CONFIRMED' ELSE 'CLAIMED' END, 'bench', now() - interval '2 days', now() - interval '1 day'"
                    + " FROM generate_series(1, " + rows + ") g");
            // as the rows of a real table would be by now: vacuumed (hint bits, visibility map), so that no
            // autovacuum of these fresh rows competes with the runs that follow
            s.execute("VACUUM (ANALYZE) idempotency_record");
        }
    }
}
