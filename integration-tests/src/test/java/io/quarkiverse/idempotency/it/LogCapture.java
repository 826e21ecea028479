package io.quarkiverse.idempotency.it;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Every log record of this JVM while installed, with its stack trace's messages, for tests that assert on what was
 * (not) logged.
 */
public final class LogCapture extends Handler implements AutoCloseable {

    private final List<String> lines = new CopyOnWriteArrayList<>();

    private LogCapture() {
    }

    public static LogCapture install() {
        LogCapture capture = new LogCapture();
        Logger.getLogger("").addHandler(capture);
        return capture;
    }

    @Override
    public void publish(LogRecord record) {
        StringBuilder line = new StringBuilder(String.valueOf(record.getMessage()));
        for (Throwable t = record.getThrown(); t != null; t = t.getCause() == t ? null : t.getCause()) {
            line.append(" | ").append(t);
        }
        lines.add(line.toString());
    }

    /** @return the lines containing a text */
    public List<String> matching(String text) {
        List<String> found = new ArrayList<>();
        for (String line : lines) {
            if (line.contains(text)) {
                found.add(line);
            }
        }
        return found;
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        Logger.getLogger("").removeHandler(this);
    }
}
