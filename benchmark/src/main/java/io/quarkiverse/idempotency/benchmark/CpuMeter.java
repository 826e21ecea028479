package io.quarkiverse.idempotency.benchmark;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time spent by this JVM, the PostgreSQL server and the RabbitMQ server, read from {@code /proc} (Linux only; on
 * other systems every figure is 0). All three share this machine's cores, so a consumer's cost per message is the sum:
 * this is what tells which side an added cost lands on.
 * <p>
 * A sample holds each process's own counter, keyed by pid and start time; a difference counts, per process alive at
 * the end, what it used since the first sample (all of it for a process started in between). The CPU of a process
 * that exited in between is not counted. Every process named {@code postgres} or {@code beam.smp} on the machine
 * counts: run nothing else against them meanwhile.
 */
final class CpuMeter {

    /** Linux's USER_HZ: /proc counts CPU time in ticks of 10 ms. */
    private static final double TICK_US = 10_000;
    private static final long SELF = ProcessHandle.current().pid();
    private static final String[] SIDES = { "jvm", "postgres", "rabbitmq" };

    /** One process's counter. */
    record Counter(String side, long ticks) {
    }

    /** The counters at one moment, by pid and start time. */
    record Sample(Map<String, Counter> processes) {
    }

    private CpuMeter() {
    }

    static Sample sample() {
        Map<String, Counter> processes = new HashMap<>();
        try (DirectoryStream<Path> all = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path process : all) {
                String side = side(process);
                if (side == null) {
                    continue;
                }
                String[] stat = stat(process);
                if (stat != null) {
                    // utime + stime; the start time tells a reused pid apart
                    processes.put(process.getFileName() + "@" + stat[19],
                            new Counter(side, Long.parseLong(stat[11]) + Long.parseLong(stat[12])));
                }
            }
        } catch (IOException | RuntimeException notLinux) {
            // figures stay 0
        }
        return new Sample(processes);
    }

    /** @return microseconds of CPU per message, by side and in total, between two samples */
    static Map<String, Long> perMessage(Sample before, Sample after, int messages) {
        Map<String, Long> ticks = new LinkedHashMap<>();
        for (String side : SIDES) {
            ticks.put(side, 0L);
        }
        after.processes().forEach((process, counter) -> {
            Counter earlier = before.processes().get(process);
            ticks.merge(counter.side(), counter.ticks() - (earlier == null ? 0 : earlier.ticks()), Long::sum);
        });
        Map<String, Long> micros = new LinkedHashMap<>();
        long total = 0;
        for (Map.Entry<String, Long> side : ticks.entrySet()) {
            long us = Math.round(side.getValue() * TICK_US / messages);
            micros.put(side.getKey(), us);
            total += us;
        }
        micros.put("total", total);
        return micros;
    }

    /** @return "jvm 170, postgres 150, rabbitmq 60, total 380 us CPU per message" */
    static String describe(Map<String, Long> micros) {
        StringBuilder line = new StringBuilder();
        micros.forEach((side, us) -> line.append(line.isEmpty() ? "" : ", ").append(side).append(' ').append(us));
        return line.append(" us CPU per message").toString();
    }

    private static String side(Path process) {
        try {
            if (Long.parseLong(process.getFileName().toString()) == SELF) {
                return "jvm";
            }
            String comm = Files.readString(process.resolve("comm")).trim();
            return switch (comm) {
                case "postgres" -> "postgres";
                case "beam.smp" -> "rabbitmq";
                default -> null;
            };
        } catch (IOException | NumberFormatException gone) {
            return null;
        }
    }

    /** @return the fields of /proc/pid/stat after the command name: [0] is the state, [11] utime, [19] start time */
    private static String[] stat(Path process) {
        try {
            String stat = Files.readString(process.resolve("stat"));
            // the command name may hold spaces: fields are counted after its closing parenthesis
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        } catch (IOException | RuntimeException gone) {
            return null;
        }
    }
}
