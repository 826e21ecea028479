package io.quarkiverse.idempotency.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Every log record of this JVM while installed, with its exceptions' messages (and, when asked, their stack frames),
 * for tests that assert on what was (not) logged.
 */
public final class LogCapture extends Handler implements AutoCloseable {

    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final boolean stackFrames;

    private LogCapture(boolean stackFrames) {
        this.stackFrames = stackFrames;
    }

    /** Captures each record's message and its exceptions' messages. */
    public static LogCapture install() {
        return install(false);
    }

    /** Captures each record's message and its exceptions, stack frames included (where a thread was blocked). */
    public static LogCapture installWithStackFrames() {
        return install(true);
    }

    private static LogCapture install(boolean stackFrames) {
        LogCapture capture = new LogCapture(stackFrames);
        Logger.getLogger("").addHandler(capture);
        return capture;
    }

    @Override
    public void publish(LogRecord record) {
        StringBuilder line = new StringBuilder(String.valueOf(record.getMessage()));
        for (Throwable t = record.getThrown(); t != null; t = t.getCause() == t ? null : t.getCause()) {
            line.append(" | ").append(t);
            if (stackFrames) {
                for (StackTraceElement frame : t.getStackTrace()) {
                    line.append("\n\tat ").append(frame);
                }
            }
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
