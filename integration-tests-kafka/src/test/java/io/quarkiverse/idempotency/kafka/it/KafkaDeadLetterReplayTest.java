package io.quarkiverse.idempotency.kafka.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.DeadLetterReplay;
import io.quarkiverse.idempotency.DeadLetterReplays;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Dead letters replayed from the real Kafka's dead-letter topic: payments dead-lettered for two reasons (two check
 * constraints on the charge table, an outage each); once one is gone, its payments are replayed (keys released, copies
 * acknowledged by the brokers) and charged once each, while the others stay dead-lettered; a replay run again copies
 * nothing that is handled, and copies a key released without its copy (a replay stopped in between).
 */
@QuarkusTest
class KafkaDeadLetterReplayTest {

    static final String CHANNEL = "payments";

    @Inject
    DeadLetterReplays replays;

    @Inject
    DeadLetters deadLetters;

    Topics topics;
    String run;

    @BeforeEach
    void open() {
        topics = new Topics();
        run = UUID.randomUUID().toString().substring(0, 6);
    }

    @AfterEach
    void close() {
        Charges.execute("ALTER TABLE charge DROP CONSTRAINT IF EXISTS replay_fault_a");
        Charges.execute("ALTER TABLE charge DROP CONSTRAINT IF EXISTS replay_fault_b");
        topics.close();
    }

    @Test
    void oneReasonIsReplayedAndChargedOnceWhileTheOtherStaysDeadLettered() {
        List<String> a = List.of("KRA-" + run + "-1", "KRA-" + run + "-2", "KRA-" + run + "-3");
        List<String> b = List.of("KRB-" + run + "-1", "KRB-" + run + "-2");
        Charges.execute("ALTER TABLE charge ADD CONSTRAINT replay_fault_a CHECK (order_id NOT LIKE 'KRA-%')");
        Charges.execute("ALTER TABLE charge ADD CONSTRAINT replay_fault_b CHECK (order_id NOT LIKE 'KRB-%')");
        int before = topics.deadLetters().size();
        for (int i = 0; i < 3; i++) {
            topics.publish(a.get(i), Topics.payment(a.get(i), 100 + i));
            if (i < 2) {
                topics.publish(b.get(i), Topics.payment(b.get(i), 200 + i));
            }
        }
        await().atMost(Duration.ofSeconds(90)).until(() -> topics.deadLetters().size() >= before + 5);
        for (String order : a) {
            assertTrue(deadLetters.find(CHANNEL, key(order)).isPresent(), order + " dead-lettered");
        }
        String reason = deadLetters.find(CHANNEL, key(a.get(0))).orElseThrow().reason();
        assertTrue(reason.contains("replay_fault_a"), "the reason names the outage: " + reason);

        Charges.execute("ALTER TABLE charge DROP CONSTRAINT replay_fault_a"); // the fix
        DeadLetterReplay replay = replays.replay(CHANNEL, "REPLAY_FAULT_A", 1000);
        assertEquals(3, replay.replayed(), replay.toString());
        assertEquals(3, replay.released(), replay.toString());
        assertTrue(replay.skipped() >= 2, "the other reason's, and earlier tests' dead letters: " + replay);
        await().atMost(Duration.ofSeconds(30)).until(() -> a.stream().allMatch(o -> Charges.of(o) == 1));
        for (String order : b) {
            assertEquals(0, Charges.of(order), order);
            assertTrue(deadLetters.find(CHANNEL, key(order)).isPresent(), order + " still dead-lettered");
        }

        DeadLetterReplay again = replays.replay(CHANNEL, "replay_fault_a", 1000);
        assertEquals(0, again.replayed(), "the replayed keys are handled: nothing copied again; " + again);

        // a key released, and its copy never made (a replay stopped in between): the next replay copies it
        Charges.execute("ALTER TABLE charge DROP CONSTRAINT replay_fault_b");
        assertTrue(deadLetters.release(CHANNEL, key(b.get(0))));
        DeadLetterReplay rest = replays.replay(CHANNEL, "replay_fault_b", 1000);
        assertEquals(2, rest.replayed(), rest.toString());
        assertEquals(1, rest.released(), "one released before: " + rest);
        await().atMost(Duration.ofSeconds(30)).until(() -> b.stream().allMatch(o -> Charges.of(o) == 1));
        await().during(Duration.ofSeconds(1)).until(() -> a.stream().allMatch(o -> Charges.of(o) == 1));
    }

    @Test
    void aRecordKeyedByItsPositionKeepsThatKeyOnItsCopyAndIsHandledOnceHoweverOftenItIsReplayed() {
        String fault = "replay_fault_e_" + run;
        String event = "RPE-" + run;
        Charges.execute("ALTER TABLE event_log ADD CONSTRAINT " + fault + " CHECK (payload NOT LIKE '" + event + "%')");
        try {
            topics.publish(KafkaServices.EVENTS, null, event, Map.of()); // no ce_id: keyed by its position
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> !topics.deadLetters(KafkaServices.EVENT_DEAD_LETTERS).isEmpty());
            String key = topics.deadLetters(KafkaServices.EVENT_DEAD_LETTERS).get(0).headers()
                    .get("x-idempotency-key");
            assertTrue(key.startsWith("events:" + KafkaServices.EVENTS + "/") && key.contains("-0@"), key);
        } finally {
            Charges.execute("ALTER TABLE event_log DROP CONSTRAINT " + fault); // the fix
        }

        DeadLetterReplay replay = replays.replay("events", fault, 1000);
        assertEquals(1, replay.replayed(), replay.toString());
        await().atMost(Duration.ofSeconds(30)).until(() -> Charges.eventsLike(event) == 1);
        // the copy sits at another offset: keyed by its own position, it would leave the dead letter's key released
        // and unhandled, and every replay would log the event again
        DeadLetterReplay again = replays.replay("events", fault, 1000);
        assertEquals(0, again.replayed(), "the copy was handled under the dead letter's key: " + again);
        await().during(Duration.ofSeconds(1)).until(() -> Charges.eventsLike(event) == 1);
    }

    @Test
    void aDeadLetterOlderThanTheRetentionWhoseKeyTheStoreForgotIsNotCopiedAYoungOneIs() {
        String reason = "replay_forgotten_" + run;
        String old = "KRF-" + run;
        String young = "KRG-" + run;
        // charged, its key purged after the retention (as the store does a day later), and an old dead letter of it
        // still in the topic: the store cannot tell that a replay's copy of it was handled
        topics.publish(old, Topics.payment(old, 300));
        await().atMost(Duration.ofSeconds(30)).until(() -> Charges.of(old) == 1);
        assertEquals(1, Charges.count("SELECT count(*) FROM idempotency_record WHERE scoped_key = ?",
                "payments:" + key(old)), "its key is there, to be purged");
        Charges.execute("DELETE FROM idempotency_record WHERE scoped_key = ?", "payments:" + key(old));
        topics.publish(KafkaServices.DEAD_LETTERS, old, Topics.payment(old, 300),
                deadLetterHeaders(old, reason, Instant.now().minus(Duration.ofDays(3))));
        // dead-lettered a minute ago, its key unknown to the store (as one released by hand): copied
        topics.publish(KafkaServices.DEAD_LETTERS, young, Topics.payment(young, 400),
                deadLetterHeaders(young, reason, Instant.now().minus(Duration.ofMinutes(1))));

        DeadLetterReplay replay = replays.replay(CHANNEL, reason, 1000);
        assertEquals(1, replay.replayed(), "the young one only: " + replay);
        assertTrue(replay.skipped() >= 1, "the old one, and the other reasons' dead letters: " + replay);
        await().atMost(Duration.ofSeconds(30)).until(() -> Charges.of(young) == 1);
        await().during(Duration.ofSeconds(1)).until(() -> Charges.of(old) == 1);
    }

    private static Map<String, String> deadLetterHeaders(String order, String reason, Instant at) {
        return Map.of("dead-letter-topic", KafkaServices.TOPIC, "dead-letter-reason", reason,
                "x-idempotency-channel", CHANNEL, "x-idempotency-key", CHANNEL + ":" + key(order),
                "x-idempotency-reason", "java.lang.IllegalStateException: " + reason,
                "x-idempotency-dead-lettered-at", at.toString());
    }

    /** The key of an order's payment (see OrderIdKey). */
    private static String key(String orderId) {
        return "charge:" + orderId;
    }
}
