package io.quarkiverse.idempotency.runtime;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * The outcomes of the last hour, minute by minute, for the Dev UI's chart: handled, duplicates by origin, busy, retried
 * and dead-lettered. A ring of sixty minutes, each a row of counters; a minute's row is cleared when the ring comes back
 * to it. Kept in dev mode only.
 */
public final class OutcomeHistory {

    /** What the chart stacks, in its order. */
    public enum Series {
        HANDLED("handled"),
        REDELIVERY("duplicate: redelivery"),
        REPUBLISH("duplicate: republish"),
        TAKEOVER("duplicate: takeover"),
        UNKNOWN("duplicate: origin unknown"),
        BUSY("busy"),
        RETRIED("retried"),
        DEAD_LETTERED("dead-lettered");

        private final String label;

        Series(String label) {
            this.label = label;
        }

        /** @return how the chart's legend names it */
        public String label() {
            return label;
        }

        static Series of(DuplicateOrigin origin) {
            return switch (origin) {
                case REDELIVERY -> REDELIVERY;
                case REPUBLISH -> REPUBLISH;
                case TAKEOVER -> TAKEOVER;
                case UNKNOWN -> UNKNOWN;
            };
        }
    }

    static final int MINUTES = 60;
    private static final int SERIES = Series.values().length;

    private final LongSupplier clock;
    private final AtomicLongArray counts = new AtomicLongArray(MINUTES * SERIES);
    /** The minute (since the epoch) each slot of the ring holds. */
    private final long[] minutes = new long[MINUTES];

    public OutcomeHistory() {
        this(System::currentTimeMillis);
    }

    /** @param clock the wall clock in milliseconds (tests move it) */
    OutcomeHistory(LongSupplier clock) {
        this.clock = clock;
    }

    /** Counts one outcome in the current minute. */
    void count(Series series) {
        long minute = clock.getAsLong() / 60_000;
        int slot = (int) (minute % MINUTES);
        if (minutes[slot] != minute) {
            synchronized (this) {
                if (minutes[slot] != minute) {
                    for (int s = 0; s < SERIES; s++) {
                        counts.set(slot * SERIES + s, 0);
                    }
                    minutes[slot] = minute;
                }
            }
        }
        counts.incrementAndGet(slot * SERIES + series.ordinal());
    }

    /**
     * @return the last hour, oldest minute first: each series' label with its sixty counts, and the minutes' starts
     *         (milliseconds since the epoch) under {@code "minutes"}
     */
    public synchronized Map<String, List<Long>> lastHour() {
        long now = clock.getAsLong() / 60_000;
        Map<String, List<Long>> hour = new LinkedHashMap<>();
        List<Long> starts = new ArrayList<>(MINUTES);
        for (long minute = now - MINUTES + 1; minute <= now; minute++) {
            starts.add(minute * 60_000);
        }
        hour.put("minutes", starts);
        for (Series series : Series.values()) {
            List<Long> values = new ArrayList<>(MINUTES);
            for (long minute = now - MINUTES + 1; minute <= now; minute++) {
                int slot = (int) (minute % MINUTES);
                values.add(minutes[slot] == minute ? counts.get(slot * SERIES + series.ordinal()) : 0);
            }
            hour.put(series.label(), values);
        }
        return hour;
    }
}
