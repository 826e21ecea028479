package io.quarkiverse.idempotency.benchmark;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time spent by this JVM, the PostgreSQL server and the RabbitMQ server, read from {@code /proc} (Linux only; on
 * other systems every figure is 0). All three share this machine's cores, so a consumer's cost per message is the sum:
 * this is what tells which side an added cost lands on.
 */
final class CpuMeter {

    /** Linux's USER_HZ: /proc counts CPU time in ticks of 10 ms. */
    private static final double TICK_US = 10_000;
    private static final long SELF = ProcessHandle.current().pid();

    private CpuMeter() {
    }

    /** @return CPU ticks so far, by side: jvm, postgres, rabbitmq */
    static Map<String, Long> sample() {
        Map<String, Long> ticks = new LinkedHashMap<>();
        ticks.put("jvm", 0L);
        ticks.put("postgres", 0L);
        ticks.put("rabbitmq", 0L);
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path process : processes) {
                String side = side(process);
                if (side != null) {
                    ticks.merge(side, ticks(process), Long::sum);
                }
            }
        } catch (IOException | RuntimeException notLinux) {
            // figures stay 0
        }
        return ticks;
    }

    /** @return microseconds of CPU per message, by side, between two samples */
    static String perMessage(Map<String, Long> before, Map<String, Long> after, int messages) {
        StringBuilder line = new StringBuilder();
        long total = 0;
        for (Map.Entry<String, Long> side : after.entrySet()) {
            long used = side.getValue() - before.getOrDefault(side.getKey(), 0L);
            total += used;
            line.append(side.getKey()).append(' ').append(Math.round(used * TICK_US / messages)).append(", ");
        }
        return line.append("total ").append(Math.round(total * TICK_US / messages)).append(" us CPU per message")
                .toString();
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

    private static long ticks(Path process) {
        try {
            String stat = Files.readString(process.resolve("stat"));
            // the command name may hold spaces: fields are counted after its closing parenthesis
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime + stime
        } catch (IOException | RuntimeException gone) {
            return 0;
        }
    }
}
