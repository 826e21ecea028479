package io.quarkiverse.idempotency.benchmark;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import javax.sql.DataSource;

/**
 * {@code partitioned_vs_flat}: the default {@code @Idempotent} consumer, with the benchmark's configuration (the purge
 * job off, 256 messages outstanding), in a process of its own on a fresh key table partitioned by time, and the same on
 * an unpartitioned one; in rounds, each round both layouts, in turns (which goes first alternates). The ratio is the best
 * partitioned run over the best unpartitioned
 * one, as the main measurement takes each consumer's best; every round's pair is printed too, since this machine is
 * noisy.
 */
final class LayoutRun {

    static final int ROUNDS = Integer.getInteger("bench.layouts.rounds", 3);
    static final long SECONDS = Long.getLong("bench.layouts.seconds", 30);
    static final long WARMUP_SECONDS = Long.getLong("bench.layouts.warmup-seconds", 15);

    private final SoakRun runs;

    LayoutRun(com.rabbitmq.client.Connection rabbit, DataSource dataSource) {
        this.runs = new SoakRun(rabbit, dataSource);
    }

    /** @return the best partitioned rate over the best unpartitioned one */
    double run() throws Exception {
        SoakRun.Settings settings = new SoakRun.Settings(SECONDS, WARMUP_SECONDS, false);
        double bestPartitioned = 0;
        double bestFlat = 0;
        List<String> pairs = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            List<String> order = round % 2 == 0 ? List.of("partitioned", "unpartitioned")
                    : List.of("unpartitioned", "partitioned");
            double partitioned = 0;
            double flat = 0;
            for (String store : order) {
                double rate = runs.run(store, settings).rate();
                if (store.equals("partitioned")) {
                    partitioned = rate;
                } else {
                    flat = rate;
                }
            }
            bestPartitioned = Math.max(bestPartitioned, partitioned);
            bestFlat = Math.max(bestFlat, flat);
            pairs.add(String.format(Locale.ROOT, "%.0f/%.0f (%.2f)", partitioned, flat, partitioned / flat));
        }
        if (bestPartitioned <= 0 || bestFlat <= 0) {
            throw new IllegalStateException("A layout's consumer made no progress (partitioned " + bestPartitioned
                    + " msg/s, one table " + bestFlat + " msg/s); see benchmark/target/layout-*.log");
        }
        System.out.printf(Locale.ROOT, "8. layouts: the default consumer in a process of its own, %d s per run after %d s of"
                + " warm-up: partitioned by time %.0f msg/s, one table %.0f msg/s at best (ratio %.2f); each round"
                + " partitioned/one table: %s%n", SECONDS, WARMUP_SECONDS, bestPartitioned, bestFlat,
                bestPartitioned / bestFlat, String.join(", ", pairs));
        return bestPartitioned / bestFlat;
    }
}
