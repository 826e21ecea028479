package io.quarkiverse.idempotency.kafka.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.kafka.it.Charges;
import io.quarkiverse.idempotency.kafka.it.KafkaServices;
import io.quarkiverse.idempotency.kafka.it.Topics;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * The configuration matrix on Kafka: the packaged application under the settings users change, with the same scenario
 * each time (payments with duplicates, one poison record, a consumer killed or a rebalance mid-stream). Under every
 * setting: each order charged once, the poison record dead-lettered after its whole budget (its attempts shared by
 * whoever owned its partition), nothing left uncommitted.
 */
class KafkaSettingsIT {

    static final int ORDERS = 100;

    /** {@code concurrency=2}: two consumers of the group in one process, one per partition; killed and restarted. */
    @Test
    void twoConsumersInOneProcessKilledAndRestarted() throws Exception {
        Map<String, String> env = env("MP_MESSAGING_INCOMING_PAYMENTS_CONCURRENCY", "2");
        try (Topics topics = new Topics()) {
            String prefix = "K2-";
            List<String> published = publish(topics, prefix);
            AppProcess running = AppProcess.start("kafka-settings-concurrency", env);
            try {
                await().atMost(Duration.ofSeconds(90)).until(() -> topics.groupMembers() == 2
                        && Charges.distinctOrdersLike(prefix + "%") >= ORDERS / 3);
                running.kill();
                assertTrue(Charges.distinctOrdersLike(prefix + "%") < ORDERS, "killed mid-stream");
                running = AppProcess.start("kafka-settings-concurrency-restarted", env);
                awaitAllHandled(topics, prefix, published.size());
            } finally {
                running.close();
            }
            assertOutcome(topics, prefix);
        }
    }

    /**
     * Two processes: the second joins while the first retries the poison record in place (a rebalance revokes
     * partitions the first holds), then the first is killed (its partitions go to the second).
     */
    @Test
    void aConsumerJoiningDuringARetryInPlaceThenTheFirstKilled() throws Exception {
        // longer delays: the poison record is still being retried when the second consumer joins
        Map<String, String> env = env("QUARKUS_IDEMPOTENCY_RETRY_INITIAL_DELAY", "1s");
        try (Topics topics = new Topics()) {
            String prefix = "KR-";
            AppProcess first = AppProcess.start("kafka-settings-rebalance-a", env);
            try (AppProcess second = startSecondDuringRetry(topics, prefix, env)) {
                await().atMost(Duration.ofSeconds(60)).until(() -> topics.groupMembers() == 2
                        && Charges.distinctOrdersLike(prefix + "%") >= ORDERS / 2);
                first.kill();
                try {
                    await().atMost(Duration.ofSeconds(120)).until(() -> Charges.distinctOrdersLike(prefix + "%") == ORDERS
                            && topics.uncommitted() == 0 && poisonLetters(topics, prefix).size() >= 1);
                } catch (ConditionTimeoutException e) {
                    throw new AssertionError(Charges.distinctOrdersLike(prefix + "%") + " of " + ORDERS
                            + " charged, " + topics.uncommitted() + " uncommitted, dead letters "
                            + poisonLetters(topics, prefix).size(), e);
                }
            } finally {
                first.close();
            }
            assertOutcome(topics, prefix);
        }
    }

    // publishes the scenario's records, and starts the second consumer once the poison record failed a first time
    private static AppProcess startSecondDuringRetry(Topics topics, String prefix, Map<String, String> env)
            throws Exception {
        publish(topics, prefix);
        await().atMost(Duration.ofSeconds(60)).until(() -> Charges.count("SELECT count(*) FROM idempotency_record"
                + " WHERE state = 'FAILED' AND attempts >= 1") >= 1);
        return AppProcess.start("kafka-settings-rebalance-b", env);
    }

    private static void awaitAllHandled(Topics topics, String prefix, int published) {
        try {
            await().atMost(Duration.ofSeconds(120)).until(() -> Charges.distinctOrdersLike(prefix + "%") == ORDERS
                    && topics.uncommitted() == 0 && poisonLetters(topics, prefix).size() >= 1);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(Charges.distinctOrdersLike(prefix + "%") + " of " + ORDERS + " charged ("
                    + published + " records), " + topics.uncommitted() + " uncommitted", e);
        }
    }

    private static void assertOutcome(Topics topics, String prefix) {
        assertEquals(ORDERS, Charges.like(prefix + "%"), "each order charged exactly once");
        List<Topics.DeadLetter> poison = poisonLetters(topics, prefix);
        // a consumer killed between a dead letter and its offset commit repeats that dead letter, with its reason
        assertTrue(poison.size() >= 1 && poison.size() <= 2, "the poison record dead-lettered: " + poison.size());
        for (Topics.DeadLetter letter : poison) {
            assertEquals("dead-lettered", letter.headers().get("x-idempotency-outcome"));
            assertEquals("5", letter.headers().get("x-idempotency-attempts"), "after its one budget of five");
        }
        System.out.println("KAFKA SETTINGS " + prefix + ": " + ORDERS + " orders charged once; poison dead-lettered "
                + poison.size() + " time(s), after 5 attempts");
    }

    private static List<Topics.DeadLetter> poisonLetters(Topics topics, String prefix) {
        return topics.deadLetters().stream().filter(l -> l.value().contains(poison(prefix))
                && "dead-lettered".equals(l.headers().get("x-idempotency-outcome"))).toList();
    }

    // every order once; 20% again under the same record key, 10% under a new one; one poison record
    private static List<String> publish(Topics topics, String prefix) {
        // only this scenario's poison record has failed so far
        Charges.execute("DELETE FROM idempotency_record WHERE state IN ('FAILED', 'DEAD_LETTERED')");
        Random random = new Random(3);
        List<String[]> mix = new ArrayList<>();
        for (int i = 0; i < ORDERS; i++) {
            String body = Topics.payment(prefix + i, 100 + i);
            mix.add(new String[] { prefix + i, body });
            if (random.nextInt(100) < 20) {
                mix.add(new String[] { prefix + i, body });
            }
            if (random.nextInt(100) < 10) {
                mix.add(new String[] { UUID.randomUUID().toString(), body });
            }
        }
        mix.add(ORDERS / 5, new String[] { "poison", Topics.payment(poison(prefix), 1) });
        Collections.shuffle(mix.subList(0, ORDERS / 5), random);
        List<String> keys = new ArrayList<>();
        for (String[] record : mix) {
            topics.publish(record[0], record[1]);
            keys.add(record[0]);
        }
        return keys;
    }

    // longer than the charge table's order id: every attempt fails
    private static String poison(String prefix) {
        return prefix + "P" + "9".repeat(300);
    }

    private static Map<String, String> env(String name, String value) {
        Map<String, String> env = new HashMap<>(Map.of("DEMO_GATEWAY_LATENCY", "30ms",
                "QUARKUS_IDEMPOTENCY_RETRY_INITIAL_DELAY", "100ms"));
        env.put(name, value);
        return KafkaServices.environment(env);
    }
}
