package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Keeps a storm of identical log lines bounded: per kind of line, at most {@code perWindow} lines in each window of
 * time; the next line logged after a window that suppressed some says how many. A thousand messages failing the same
 * way in a second give a handful of lines, not a thousand.
 */
final class LogThrottle {

    private final long windowNanos;
    private final int perWindow;
    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

    LogThrottle(long window, TimeUnit unit, int perWindow) {
        this.windowNanos = unit.toNanos(window);
        this.perWindow = perWindow;
    }

    /**
     * @param kind what the line is about (an outcome and a channel, say)
     * @return {@code null} when the line must be suppressed; else a suffix for it, empty or naming how many lines like
     *         it were suppressed before
     */
    String admit(String kind) {
        return windows.computeIfAbsent(kind, k -> new Window()).admit(System.nanoTime());
    }

    private final class Window {
        private long start = Long.MIN_VALUE;
        private int logged;
        private long suppressed;

        synchronized String admit(long now) {
            if (start == Long.MIN_VALUE || now - start >= windowNanos) {
                String summary = suppressed == 0 ? ""
                        : " (" + suppressed + " more like it were not logged in the "
                                + TimeUnit.NANOSECONDS.toSeconds(now - start) + " s before)";
                start = now;
                logged = 1;
                suppressed = 0;
                return summary;
            }
            if (logged < perWindow) {
                logged++;
                return "";
            }
            suppressed++;
            return null;
        }
    }
}
