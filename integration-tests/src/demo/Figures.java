import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;

/**
 * The demo application's figures, JVM or native: time from launch to ready, throughput on new payments, and resident
 * memory after them. Starts the application (the jar, or the executable given as the first argument), waits until it
 * logs that it started (the wall time from the launch to that line is startup_ms), publishes N new payments (second argument, default 1000), waits until all are charged
 * and prints one line: {@code FIGURES mode=… startup_ms=… quarkus_started_ms=… payments=… seconds=… per_s=… rss_mb=…}.
 *
 * Run from the repository root: java -cp "integration-tests/target/quarkus-app/lib/main/*"
 * integration-tests/src/demo/Figures.java [executable] [payments]
 */
public class Figures {

    public static void main(String[] args) throws Exception {
        String executable = args.length > 0 && !args[0].isEmpty() ? args[0] : null;
        int payments = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        String jdbcUrl = env("QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/test");
        String jdbcUser = env("QUARKUS_DATASOURCE_USERNAME", "postgres");
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(env("RABBITMQ_HOST", "127.0.0.1"));
        factory.setPort(Integer.parseInt(env("RABBITMQ_PORT", "5672")));

        List<String> command = executable != null ? List.of(executable)
                : List.of(ProcessHandle.current().info().command().orElse("java"), "-jar",
                        "integration-tests/target/quarkus-app/quarkus-run.jar");
        Path log = Path.of("integration-tests", "target", "figures-app.log");
        Files.deleteIfExists(log);
        long launched = System.nanoTime();
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putIfAbsent("QUARKUS_HTTP_PORT", "0");
        Process app = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(app::destroy));
        try (com.rabbitmq.client.Connection rabbit = factory.newConnection("idempotency-figures");
                Connection db = DriverManager.getConnection(jdbcUrl, jdbcUser, env("QUARKUS_DATASOURCE_PASSWORD", ""))) {
            until(app, log, () -> Files.readString(log).contains("Installed features"), 60, "the application to start");
            long startupMs = (System.nanoTime() - launched) / 1_000_000;
            long quarkusMs = startedIn(Files.readString(log));
            String run = UUID.randomUUID().toString().substring(0, 8);
            long before = count(db, "SELECT count(*) FROM charge");
            Channel channel = rabbit.createChannel();
            channel.confirmSelect();
            long start = System.nanoTime();
            for (int i = 0; i < payments; i++) {
                AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("application/json")
                        .messageId(UUID.randomUUID().toString()).deliveryMode(2).headers(Map.of()).build();
                channel.basicPublish("payments", "payment", props, ("{\"orderId\": \"F-" + run + "-" + i
                        + "\", \"amountCents\": 100}").getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(60_000);
            until(app, log, () -> count(db, "SELECT count(*) FROM charge") - before >= payments, 300,
                    "the payments to be charged");
            double seconds = (System.nanoTime() - start) / 1e9;
            long rssKb = rssKb(app.pid());
            System.out.printf(Locale.ROOT, "FIGURES mode=%s startup_ms=%d quarkus_started_ms=%d payments=%d seconds=%.2f per_s=%.0f"
                    + " rss_mb=%.0f%n", executable != null ? "native" : "jvm", startupMs, quarkusMs, payments, seconds,
                    payments / seconds, rssKb / 1024.0);
        } finally {
            app.destroy();
            app.waitFor(20, TimeUnit.SECONDS);
        }
    }

    // Quarkus's own "started in 0.123s" (its boot, without the JVM's)
    static long startedIn(String log) {
        Matcher m = Pattern.compile("started in ([0-9.]+)s").matcher(log);
        return m.find() ? Math.round(Double.parseDouble(m.group(1)) * 1000) : -1;
    }

    static long rssKb(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    interface Check {
        boolean ok() throws Exception;
    }

    static void until(Process app, Path log, Check check, int seconds, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!check.ok()) {
            if (!app.isAlive()) {
                throw new IllegalStateException("the application exited; see " + log);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what + "; see " + log);
            }
            Thread.sleep(10);
        }
    }

    static long count(Connection db, String sql) throws SQLException {
        try (Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
