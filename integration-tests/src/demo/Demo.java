import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;

/**
 * The demo: starts the packaged application, publishes a realistic mix of payments to RabbitMQ, waits until the queue
 * drains, and prints what happened from the database and the broker. Exit 0 when every order was charged exactly once
 * and exactly the keyless payments were dead-lettered.
 *
 * Run from the repository root (see README): java -cp "integration-tests/target/quarkus-app/lib/main/*"
 * integration-tests/src/demo/Demo.java
 */
public class Demo {

    static final int NEW_PAYMENTS = 200;
    static final int REDELIVERED = 50;
    static final int REPUBLISHED = 30;
    static final int KEYLESS = 10;
    /** Payments that cannot be charged: one that is not JSON, one whose order id is longer than the column. */
    static final int POISON = 2;

    public static void main(String[] args) throws Exception {
        String jdbcUrl = env("QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/test");
        String jdbcUser = env("QUARKUS_DATASOURCE_USERNAME", "postgres");
        String jdbcPassword = env("QUARKUS_DATASOURCE_PASSWORD", "");
        Path jar = Path.of("integration-tests", "target", "quarkus-app", "quarkus-run.jar");
        if (!Files.exists(jar)) {
            fail(jar + " is missing: build it first (mvn -B -ntp install -DskipTests)");
        }

        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(env("RABBITMQ_HOST", "127.0.0.1"));
        factory.setPort(Integer.parseInt(env("RABBITMQ_PORT", "5672")));
        factory.setUsername(env("RABBITMQ_USERNAME", "guest"));
        factory.setPassword(env("RABBITMQ_PASSWORD", "guest"));

        // A fresh run: the demo owns these queues and tables (they may not exist yet on a fresh machine).
        try (com.rabbitmq.client.Connection rabbit = factory.newConnection("idempotency-demo-reset");
                Connection db = DriverManager.getConnection(jdbcUrl, jdbcUser, jdbcPassword)) {
            for (String queue : new String[] { "payments", "payments.dlq", "payments-audit", "payments-audit.dlq", "receipts",
                    "receipts.dlq" }) {
                try (Channel c = rabbit.createChannel()) {
                    c.queuePurge(queue);
                } catch (IOException notDeclaredYet) {
                    // the application declares it
                }
            }
            for (String sql : new String[] { "DELETE FROM charge", "DELETE FROM payment_audit", "DELETE FROM receipt",
                    "DELETE FROM idempotency_outbox",
                    "DELETE FROM idempotency_record WHERE scope IN ('payments', 'payments-audit', 'receipts')" }) {
                try {
                    execute(db, sql);
                } catch (SQLException notCreatedYet) {
                    // the application's migrations create it
                }
            }
        }

        Path log = Path.of("integration-tests", "target", "demo-app.log");
        Files.deleteIfExists(log);
        System.out.println("Starting the demo application" + (System.getProperty("demo.app") != null ? " (native)" : "")
                + " (log: " + log + ") ...");
        // -Ddemo.app=<native executable>: the same demo against the native build (./demo.sh --native)
        String nativeApp = System.getProperty("demo.app");
        List<String> command = nativeApp != null ? List.of(nativeApp)
                : List.of(ProcessHandle.current().info().command().orElse("java"), "-jar", jar.toString());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putIfAbsent("QUARKUS_HTTP_PORT", "0");
        Process app = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(app::destroy));

        try (com.rabbitmq.client.Connection rabbit = factory.newConnection("idempotency-demo");
                Connection db = DriverManager.getConnection(jdbcUrl, jdbcUser, jdbcPassword)) {
            Channel channel = rabbit.createChannel();
            waitFor(() -> {
                if (!app.isAlive()) {
                    fail("the application exited; see " + log);
                }
                return Files.readString(log).contains("Installed features") && consumers(rabbit, "payments") > 0;
            }, 60, "the application to consume the payments queue");

            List<String[]> mix = new ArrayList<>();
            List<String[]> originals = new ArrayList<>();
            Random random = new Random();
            for (int i = 1; i <= NEW_PAYMENTS; i++) {
                String[] m = { UUID.randomUUID().toString(),
                        "{\"orderId\": \"A-" + i + "\", \"amountCents\": " + (500 + random.nextInt(10_000)) + "}" };
                mix.add(m);
                originals.add(m);
            }
            for (int i = 0; i < REDELIVERED; i++) {
                mix.add(originals.get(random.nextInt(originals.size()))); // the broker delivering it again
            }
            for (int i = 0; i < REPUBLISHED; i++) { // a double click, an outbox republish: new message id
                mix.add(new String[] { UUID.randomUUID().toString(), originals.get(random.nextInt(originals.size()))[1] });
            }
            for (int i = 0; i < KEYLESS; i++) {
                mix.add(new String[] { UUID.randomUUID().toString(), "{\"amountCents\": 100}" });
            }
            mix.add(new String[] { "poison-not-json", "amount=100;order=A-1" });
            mix.add(new String[] { "poison-too-long", "{\"orderId\": \"A-" + "9".repeat(300) + "\", \"amountCents\": 1}" });
            Collections.shuffle(mix, random);
            channel.confirmSelect();
            for (String[] m : mix) {
                AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("application/json")
                        .messageId(m[0]).deliveryMode(2).headers(Map.of()).build();
                channel.basicPublish("payments", "payment", props, m[1].getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(30_000);
            System.out.printf("Published %d messages to exchange 'payments': %d new payments, %d redelivered (same"
                    + " message id), %d republished (same order, new message id), %d without an orderId, and %d"
                    + " poison payments (not JSON; an order id too long for the charge table)%n",
                    mix.size(), NEW_PAYMENTS, REDELIVERED, REPUBLISHED, KEYLESS, POISON);

            // the audit consumer records every message it can read: all but the poison ones
            long messageIds = mix.stream().map(m -> m[0]).distinct().count() - POISON;
            // the poison payment that fails is retried four times, over about fifteen seconds, then dead-lettered
            waitFor(() -> ready(rabbit, "payments") == 0 && ready(rabbit, "payments.dlq") == KEYLESS + POISON
                    && ready(rabbit, "payments-audit") == 0 && count(db, "SELECT count(*) FROM payment_audit") == messageIds
                    && count(db, "SELECT count(DISTINCT order_id) FROM charge") == NEW_PAYMENTS
                    && count(db, "SELECT count(*) FROM idempotency_record WHERE scope = 'payments' AND state = 'CLAIMED'") == 0
                    && count(db, "SELECT count(DISTINCT order_id) FROM receipt") == NEW_PAYMENTS
                    && count(db, "SELECT count(*) FROM idempotency_outbox") == 0,
                    90, "the queue to drain");

            long charges = count(db, "SELECT count(*) FROM charge");
            long orders = count(db, "SELECT count(DISTINCT order_id) FROM charge");
            long doubleCharged = count(db, "SELECT count(*) FROM (SELECT order_id FROM charge GROUP BY order_id"
                    + " HAVING count(*) > 1) twice");
            long confirmed = count(db, "SELECT count(*) FROM idempotency_record WHERE scope = 'payments'"
                    + " AND state = 'CONFIRMED'");
            long audited = count(db, "SELECT count(*) FROM payment_audit");
            long receipts = count(db, "SELECT count(*) FROM receipt");
            long receiptIds = count(db, "SELECT count(DISTINCT message_id) FROM receipt");
            long receiptOrders = count(db, "SELECT count(DISTINCT order_id) FROM receipt");
            long ordersWithTwoIds = count(db, "SELECT count(*) FROM (SELECT order_id FROM receipt GROUP BY order_id"
                    + " HAVING count(DISTINCT message_id) > 1) twice");
            Map<String, Long> deadLettered = deadLetters(channel);
            Map<String, Long> outcomes = outcomes(Files.readString(log));
            long deliveries = outcomes.values().stream().mapToLong(Long::longValue).sum();
            System.out.println();
            System.out.println("What happened");
            System.out.printf("  deliveries to the payments consumer : %d %s%n", deliveries, outcomes);
            System.out.printf("  charges (rows in charge)            : %d, for %d distinct orders, %d charged twice%n",
                    charges, orders, doubleCharged);
            System.out.printf("  duplicates dropped (acked, not run) : %d%n", outcomes.getOrDefault("duplicate", 0L));
            System.out.printf("  dead-lettered to payments.dlq       : %d %s%n",
                    deadLettered.values().stream().mapToLong(Long::longValue).sum(), deadLettered);
            System.out.printf("  confirmed keys in idempotency_record: %d%n", confirmed);
            System.out.printf("  audit log entries (second consumer) : %d (one per distinct message id but the poison ones: %d)%n", audited,
                    messageIds);
            System.out.printf("  receipts sent through the outbox    : %d, to exchange 'receipts', recorded once each downstream"
                    + " (queue receipts): %d orders, %d message ids, %d orders under two ids%n", receipts, receiptOrders,
                    receiptIds, ordersWithTwoIds);
            System.out.printf("  left in the outbox                  : %d%n",
                    count(db, "SELECT count(*) FROM idempotency_outbox"));
            System.out.printf("  left in queue payments              : %d%n", ready(rabbit, "payments"));
            boolean ok = charges == NEW_PAYMENTS && doubleCharged == 0
                    && receipts == NEW_PAYMENTS && receiptOrders == NEW_PAYMENTS && receiptIds == NEW_PAYMENTS
                    && deadLettered.getOrDefault("key-missing", 0L) == KEYLESS
                    && deadLettered.getOrDefault("unreadable", 0L) == 1
                    && deadLettered.getOrDefault("dead-lettered after 5 attempts", 0L) == 1;
            System.out.println(ok ? "OK: every order charged exactly once, with one receipt under one id." : "FAILED: see above.");
            app.destroy();
            app.waitFor(20, TimeUnit.SECONDS);
            System.exit(ok ? 0 : 1);
        }
    }

    // The dead letters by why, from the headers the extension gives them (the queue is emptied on the way).
    static Map<String, Long> deadLetters(Channel channel) throws IOException {
        Map<String, Long> byOutcome = new java.util.TreeMap<>();
        for (com.rabbitmq.client.GetResponse r = channel.basicGet("payments.dlq", true); r != null;
                r = channel.basicGet("payments.dlq", true)) {
            Map<String, Object> headers = r.getProps().getHeaders();
            String outcome = String.valueOf(headers.get("x-idempotency-outcome"));
            if ("dead-lettered".equals(outcome)) {
                outcome = "dead-lettered after " + headers.get("x-idempotency-attempts") + " attempts";
                System.out.printf("  dead letter %s: %s%n", r.getProps().getMessageId(),
                        headers.get("x-idempotency-reason"));
            }
            byOutcome.merge(outcome, 1L, Long::sum);
        }
        return byOutcome;
    }

    // The application's own count of deliveries by outcome, from its Prometheus endpoint.
    static Map<String, Long> outcomes(String log) throws Exception {
        java.util.regex.Matcher port = java.util.regex.Pattern.compile("Listening on: http://[^:]+:(\\d+)").matcher(log);
        if (!port.find()) {
            return Map.of();
        }
        String body = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + port.group(1) + "/q/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Long> outcomes = new java.util.TreeMap<>();
        java.util.regex.Matcher line = java.util.regex.Pattern.compile(
                "idempotency_deliveries_total\\{channel=\"payments\",outcome=\"([a-z-]+)\"[^}]*} ([0-9.E]+)").matcher(body);
        while (line.find()) {
            long n = (long) Double.parseDouble(line.group(2));
            if (n > 0) {
                outcomes.put(line.group(1), n);
            }
        }
        return outcomes;
    }

    interface Check {
        boolean ok() throws Exception;
    }

    static void waitFor(Check check, int seconds, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (check.ok()) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(200); // polling the broker and the database from outside the application
        }
        fail("timed out waiting for " + what);
    }

    static long consumers(com.rabbitmq.client.Connection rabbit, String queue) throws Exception {
        try (Channel c = rabbit.createChannel()) {
            return c.queueDeclarePassive(queue).getConsumerCount();
        } catch (IOException e) {
            return 0; // not declared yet
        }
    }

    static long ready(com.rabbitmq.client.Connection rabbit, String queue) throws Exception {
        try (Channel c = rabbit.createChannel()) {
            return c.queueDeclarePassive(queue).getMessageCount();
        }
    }

    static long count(Connection db, String sql) throws SQLException {
        try (Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static void execute(Connection db, String sql) throws SQLException {
        try (Statement s = db.createStatement()) {
            s.execute(sql);
        }
    }

    static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    static void fail(String message) {
        System.err.println("Demo failed: " + message);
        System.exit(1);
    }
}
