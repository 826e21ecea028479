package io.quarkiverse.idempotency.kafka.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.kafka.it.Charges;
import io.quarkiverse.idempotency.kafka.it.KafkaServices;
import io.quarkiverse.idempotency.kafka.it.Topics;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * The packaged application killed with SIGKILL after charging payments whose offsets it had not committed yet, then
 * started again: Kafka hands the same records to the new process, which acknowledges them as duplicates.
 */
class KafkaCrashIT {

    static final int ORDERS = 100;

    @Test
    void recordsRedeliveredAfterACrashBeforeTheOffsetCommitAreChargedOnce() throws Exception {
        Map<String, String> env = new HashMap<>(Map.of("DEMO_GATEWAY_LATENCY", "50ms",
                // nothing committed before the kill: every record it handled comes back
                "MP_MESSAGING_INCOMING_PAYMENTS_AUTO_COMMIT_INTERVAL_MS", "60000"));
        try (Topics topics = new Topics()) {
            AppProcess first = AppProcess.start("kafka-crash-0", KafkaServices.environment(env));
            long chargedAtKill;
            try {
                for (int i = 0; i < ORDERS; i++) {
                    topics.publish("X-" + i, Topics.payment("X-" + i, 100 + i));
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> Charges.like("X-%") >= 20);
                first.kill();
                chargedAtKill = Charges.like("X-%");
                assertEquals(ORDERS, topics.uncommitted(), "the first process committed no offset");
            } finally {
                first.close();
            }

            env.remove("MP_MESSAGING_INCOMING_PAYMENTS_AUTO_COMMIT_INTERVAL_MS"); // every half second again
            try (AppProcess second = AppProcess.start("kafka-crash-1", KafkaServices.environment(env))) {
                await().atMost(Duration.ofSeconds(120)).until(() -> Charges.distinctOrdersLike("X-%") == ORDERS
                        && topics.uncommitted() == 0);
                double duplicates = second.metric("idempotency_deliveries_total", "outcome=\"duplicate\"",
                        "channel=\"payments\"");
                System.out.println("KAFKA CRASH: " + chargedAtKill + " charged when killed; the restarted process"
                        + " acknowledged " + duplicates + " redelivered records as duplicates");
                assertEquals(ORDERS, Charges.like("X-%"), "each order charged once");
                assertTrue(duplicates >= chargedAtKill, "every record charged before the kill came back and was"
                        + " acknowledged without a second charge (" + duplicates + " < " + chargedAtKill + ")");
            }
        }
    }
}
