import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka demo: recreates the topics 'payments' (two partitions) and 'payments-dlq', starts the packaged Kafka
 * application, publishes a realistic mix of payment records, waits until the consumer group has committed every offset,
 * and prints what happened from the database and the topics. Exit 0 when every order was charged exactly once and
 * exactly the keyless and poison records were dead-lettered.
 *
 * Run from the repository root (see README): ./demo.sh --kafka
 */
public class KafkaDemo {

    static final String TOPIC = "payments";
    static final String DLQ = "payments-dlq";
    static final String GROUP = "payments";
    static final int NEW_PAYMENTS = 200;
    static final int RESENT = 50;
    static final int REPUBLISHED = 30;
    static final int KEYLESS = 10;

    public static void main(String[] args) throws Exception {
        String bootstrap = env("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092");
        String jdbcUrl = env("QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/test?currentSchema=kafka_demo");
        String jdbcUser = env("QUARKUS_DATASOURCE_USERNAME", "postgres");
        String jdbcPassword = env("QUARKUS_DATASOURCE_PASSWORD", "");
        Path jar = Path.of("integration-tests-kafka", "target", "quarkus-app", "quarkus-run.jar");
        if (!Files.exists(jar)) {
            fail(jar + " is missing: build it first (./mvnw -B -ntp install -DskipTests)");
        }
        Map<String, Object> client = Map.of("bootstrap.servers", bootstrap);

        // A fresh run: the demo owns these topics, the group and the tables (which may not exist yet).
        try (Admin admin = Admin.create(client); Connection db = DriverManager.getConnection(jdbcUrl, jdbcUser, jdbcPassword)) {
            recreateTopics(admin);
            for (String sql : new String[] { "DELETE FROM charge", "DELETE FROM receipt", "DELETE FROM idempotency_outbox",
                    "DELETE FROM idempotency_record WHERE scope IN ('payments', 'receipts')" }) {
                try {
                    execute(db, sql);
                } catch (SQLException notCreatedYet) {
                    // the application's migrations create it
                }
            }
        }

        Path log = Path.of("integration-tests-kafka", "target", "demo-app.log");
        Files.deleteIfExists(log);
        System.out.println("Starting the Kafka demo application (log: " + log + ") ...");
        ProcessBuilder builder = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar",
                jar.toString()).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putIfAbsent("QUARKUS_HTTP_PORT", "0");
        Process app = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(app::destroy));

        try (Admin admin = Admin.create(client); Connection db = DriverManager.getConnection(jdbcUrl, jdbcUser, jdbcPassword);
                KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap,
                        "acks", "all"), new StringSerializer(), new StringSerializer())) {
            waitFor(() -> {
                if (!app.isAlive()) {
                    fail("the application exited; see " + log);
                }
                return Files.readString(log).contains("Installed features")
                        && !admin.describeConsumerGroups(List.of(GROUP)).all().get().get(GROUP).members().isEmpty();
            }, 60, "the application to join consumer group " + GROUP);

            Random random = new Random();
            // this run's orders: the topic receipts may still hold receipts of earlier runs' orders (or of the tests'),
            // which the receipts consumer records too
            String run = "A" + Long.toString(System.currentTimeMillis() % 46_656, 36) + "-";
            List<String[]> originals = new ArrayList<>();
            List<String[]> mix = new ArrayList<>();
            for (int i = 1; i <= NEW_PAYMENTS; i++) {
                String[] r = { run + i, "{\"orderId\": \"" + run + i + "\", \"amountCents\": " + (500 + random.nextInt(10_000)) + "}" };
                originals.add(r);
                mix.add(r);
            }
            for (int i = 0; i < RESENT; i++) { // a producer retrying: the same record, on the same partition
                mix.add(originals.get(random.nextInt(NEW_PAYMENTS)));
            }
            for (int i = 0; i < REPUBLISHED; i++) { // an outbox republishing under another record key: any partition
                mix.add(new String[] { "outbox-" + i, originals.get(random.nextInt(NEW_PAYMENTS))[1] });
            }
            for (int i = 0; i < KEYLESS; i++) {
                mix.add(new String[] { "keyless-" + i, "{\"amountCents\": 100}" });
            }
            mix.add(new String[] { "not-json", "amount=100;order=A-1" });
            mix.add(new String[] { "too-long", "{\"orderId\": \"A-" + "9".repeat(300) + "\", \"amountCents\": 1}" });
            Collections.shuffle(mix, random);
            for (String[] r : mix) {
                producer.send(new ProducerRecord<>(TOPIC, r[0], r[1]));
            }
            producer.flush();
            System.out.printf("Published %d records to topic '%s' (2 partitions): %d new payments, %d sent again (same"
                    + " record key), %d republished (same order, another record key), %d without an orderId, one that is"
                    + " not JSON, and one whose order id does not fit the charge table%n", mix.size(), TOPIC,
                    NEW_PAYMENTS, RESENT, REPUBLISHED, KEYLESS);

            // the poison payment is retried in place four times, over about fifteen seconds, then dead-lettered
            waitFor(() -> uncommitted(admin) == 0 && count(db, "SELECT count(DISTINCT order_id) FROM charge") == NEW_PAYMENTS
                    && count(db, "SELECT count(DISTINCT order_id) FROM receipt WHERE starts_with(order_id, '" + run + "')")
                            == NEW_PAYMENTS
                    && count(db, "SELECT count(*) FROM idempotency_outbox") == 0,
                    120, "the consumer group to commit every offset");

            long charges = count(db, "SELECT count(*) FROM charge");
            long doubleCharged = count(db, "SELECT count(*) FROM (SELECT order_id FROM charge GROUP BY order_id"
                    + " HAVING count(*) > 1) twice");
            long confirmed = count(db, "SELECT count(*) FROM idempotency_record WHERE scope = 'payments' AND state = 'CONFIRMED'");
            Map<String, Long> deadLettered = deadLetters(bootstrap);
            System.out.println();
            System.out.println("What happened");
            System.out.printf("  charges (rows in charge)            : %d, for %d distinct orders, %d charged twice%n",
                    charges, count(db, "SELECT count(DISTINCT order_id) FROM charge"), doubleCharged);
            System.out.printf("  dead-lettered to payments-dlq       : %d %s%n",
                    deadLettered.values().stream().mapToLong(Long::longValue).sum(), deadLettered);
            System.out.printf("  confirmed keys in idempotency_record: %d%n", confirmed);
            System.out.printf("  offsets not committed               : %d%n", uncommitted(admin));
            String ofThisRun = " FROM receipt WHERE starts_with(order_id, '" + run + "')";
            long receipts = count(db, "SELECT count(*)" + ofThisRun);
            long receiptIds = count(db, "SELECT count(DISTINCT message_id)" + ofThisRun);
            long receiptOrders = count(db, "SELECT count(DISTINCT order_id)" + ofThisRun);
            System.out.printf("  receipts sent through the outbox    : %d, to topic 'receipts', recorded once each downstream:"
                    + " %d orders, %d ids (ce_id)%n", receipts, receiptOrders, receiptIds);
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

    static void recreateTopics(Admin admin) throws Exception {
        try {
            admin.deleteConsumerGroups(List.of(GROUP)).all().get();
        } catch (ExecutionException noSuchGroup) {
            // first run
        }
        try {
            admin.deleteTopics(List.of(TOPIC, DLQ)).all().get();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw e;
            }
        }
        waitFor(() -> {
            try {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1), new NewTopic(DLQ, 1, (short) 1))).all().get();
                return true;
            } catch (ExecutionException stillBeingDeleted) {
                return false;
            }
        }, 30, "topics " + TOPIC + " and " + DLQ + " to be created afresh");
    }

    // How many records of the topic the group has not committed past.
    static long uncommitted(Admin admin) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(GROUP)
                .partitionsToOffsetAndMetadata().get();
        long behind = 0;
        for (int p = 0; p < 2; p++) {
            TopicPartition partition = new TopicPartition(TOPIC, p);
            long end = admin.listOffsets(Map.of(partition, OffsetSpec.latest())).all().get().get(partition).offset();
            OffsetAndMetadata done = committed.get(partition);
            behind += end - (done == null ? 0 : done.offset());
        }
        return behind;
    }

    // The dead letters by why, from the headers the extension gives them.
    static Map<String, Long> deadLetters(String bootstrap) {
        Map<String, Long> byOutcome = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers", bootstrap),
                new StringDeserializer(), new StringDeserializer())) {
            TopicPartition partition = new TopicPartition(DLQ, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            while (consumer.position(partition) < end) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    String outcome = header(r, "x-idempotency-outcome");
                    if ("dead-lettered".equals(outcome)) {
                        outcome = "dead-lettered after " + header(r, "x-idempotency-attempts") + " attempts";
                        System.out.printf("  dead letter %s: %s%n", r.key(), header(r, "x-idempotency-reason"));
                    }
                    byOutcome.merge(outcome, 1L, Long::sum);
                }
            }
        }
        return byOutcome;
    }

    static String header(ConsumerRecord<?, ?> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
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
            TimeUnit.MILLISECONDS.sleep(200); // polling Kafka and the database from outside the application
        }
        fail("timed out waiting for " + what);
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
