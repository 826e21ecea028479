package io.quarkiverse.idempotency.kafka.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
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

    /** The key of an order's payment (see OrderIdKey). */
    private static String key(String orderId) {
        return "charge:" + orderId;
    }
}
