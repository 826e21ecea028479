package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How old the duplicates of each channel were when they arrived, against the channel's retention: a duplicate that
 * arrives after its key was purged runs the work again, so the oldest duplicate age is the figure that says whether the
 * retention is long enough. Tells, once per channel, when a duplicate arrives in the last tenth of the retention.
 */
public final class DuplicateAges {

    /** A channel's oldest duplicate so far, its retention, and whether it was warned about. */
    private static final class Channel {
        final AtomicLong oldestMillis = new AtomicLong(-1);
        final AtomicLong retentionMillis = new AtomicLong();
        final AtomicBoolean warned = new AtomicBoolean();
    }

    /** The oldest duplicate of a channel and the retention it is measured against. */
    public record Oldest(Duration age, Duration retention) {
    }

    private final Map<String, Channel> channels = new ConcurrentHashMap<>();

    /**
     * @return {@code true} the first time a duplicate of the channel arrives in the last tenth of its retention
     */
    boolean observe(String channel, Duration age, Duration retention) {
        Channel c = channels.computeIfAbsent(channel == null ? "" : channel, ignored -> new Channel());
        long millis = age.toMillis();
        c.retentionMillis.set(retention.toMillis());
        c.oldestMillis.accumulateAndGet(millis, Math::max);
        return millis * 10 >= retention.toMillis() * 9 && c.warned.compareAndSet(false, true);
    }

    /** @return each channel's oldest duplicate so far, by channel name */
    Map<String, Oldest> oldest() {
        Map<String, Oldest> oldest = new TreeMap<>();
        channels.forEach((channel, c) -> oldest.put(channel, new Oldest(Duration.ofMillis(c.oldestMillis.get()),
                Duration.ofMillis(c.retentionMillis.get()))));
        return oldest;
    }
}
