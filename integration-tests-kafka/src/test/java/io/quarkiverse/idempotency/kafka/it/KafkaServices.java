package io.quarkiverse.idempotency.kafka.it;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;

/**
 * Points every application under test at the tests' Kafka and PostgreSQL (see {@link TestServices}): topics of this
 * test JVM's own (two partitions, and a dead-letter topic), so that nothing an earlier run left on a shared broker is
 * consumed, and the schema {@code kafka_demo} of database {@code test}, emptied once per test JVM.
 */
@WithTestResource(value = KafkaServices.class, scope = TestResourceScope.GLOBAL)
public class KafkaServices implements QuarkusTestResourceLifecycleManager {

    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    /** The payments topic of this test JVM. */
    public static final String TOPIC = "payments-" + RUN;
    /** Its dead-letter topic. */
    public static final String DEAD_LETTERS = "payments-dlq-" + RUN;
    /** The consumer group of the application. */
    public static final String GROUP = "payments-" + RUN;
    /** The events topic of this test JVM (one partition), consumed by the group of the same name. */
    public static final String EVENTS = "events-" + RUN;
    /** Its dead-letter topic. */
    public static final String EVENT_DEAD_LETTERS = "events-dlq-" + RUN;
    /** The topic the outbox writes notices to as CloudEvents (one partition). */
    public static final String NOTICES = "notices-" + RUN;

    private static boolean ready;

    static synchronized void prepareOnce() {
        if (ready) {
            return;
        }
        Charges.execute("DROP SCHEMA IF EXISTS kafka_demo CASCADE");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1), new NewTopic(DEAD_LETTERS, 1, (short) 1),
                    new NewTopic(EVENTS, 1, (short) 1), new NewTopic(EVENT_DEAD_LETTERS, 1, (short) 1),
                    new NewTopic(NOTICES, 1, (short) 1))).all()
                    .get();
        } catch (Exception e) {
            throw new IllegalStateException("Could not create the test topics on Kafka at " + bootstrap(), e);
        }
        ready = true;
    }

    /** @return the bootstrap server of the tests' Kafka */
    public static String bootstrap() {
        TestServices.Server kafka = TestServices.kafka();
        return kafka.host() + ":" + kafka.port();
    }

    /** @return the client settings that reach the tests' Kafka */
    static Properties clientProperties() {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        return properties;
    }

    @Override
    public Map<String, String> start() {
        return config();
    }

    private static Map<String, String> config() {
        prepareOnce();
        TestServices.Server db = TestServices.postgres();
        Map<String, String> config = new LinkedHashMap<>();
        config.put("kafka.bootstrap.servers", bootstrap());
        config.put("mp.messaging.incoming.payments.topic", TOPIC);
        config.put("mp.messaging.incoming.payments.group.id", GROUP);
        config.put("mp.messaging.incoming.payments.dead-letter-queue.topic", DEAD_LETTERS);
        config.put("mp.messaging.incoming.events.topic", EVENTS);
        config.put("mp.messaging.incoming.events.group.id", EVENTS);
        config.put("mp.messaging.incoming.events.dead-letter-queue.topic", EVENT_DEAD_LETTERS);
        config.put("mp.messaging.outgoing.notices-out.topic", NOTICES);
        // a poison record's five attempts within about three seconds, not fifteen
        config.put("quarkus.idempotency.channels.\"payments\".retry.initial-delay", "200ms");
        config.put("quarkus.idempotency.channels.\"events\".retry.initial-delay", "200ms");
        // commits every half second, so that the tests see the committed offsets move soon
        config.put("mp.messaging.incoming.payments.auto.commit.interval.ms", "500");
        config.put("quarkus.datasource.jdbc.url", Charges.url());
        config.put("quarkus.datasource.username", db.user());
        config.put("quarkus.datasource.password", db.password());
        return config;
    }

    @Override
    public void stop() {
        // the servers and topics outlive the application: the next test class uses them too
    }

    /**
     * The same settings as environment variables, for an application process a test starts itself.
     *
     * @param overrides more variables, which win
     */
    public static Map<String, String> environment(Map<String, String> overrides) {
        Map<String, String> env = new HashMap<>();
        config().forEach((key, value) -> env.put(key.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_"), value));
        env.putAll(overrides);
        return env;
    }
}
