package io.quarkiverse.idempotency.kafka.it.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.kafka.it.Charges;
import io.quarkiverse.idempotency.kafka.it.KafkaServices;
import io.quarkiverse.idempotency.kafka.it.Topics;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * Two application processes in one consumer group share the two partitions of the topic, with 30% duplicates: the
 * same order republished on the same partition, or on the other one, where the other process may be charging it at
 * that moment.
 */
class KafkaTwoConsumersIT {

    static final int ORDERS = 400;

    @Test
    void twoConsumersOfOneGroupWithThirtyPercentDuplicatesChargeEachOrderOnce() throws Exception {
        Map<String, String> env = KafkaServices.environment(Map.of("DEMO_GATEWAY_LATENCY", "5ms"));
        try (Topics topics = new Topics();
                AppProcess a = AppProcess.start("kafka-two-a", env);
                AppProcess b = AppProcess.start("kafka-two-b", env)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> topics.groupMembers() == 2);

            Random random = new Random(11);
            List<String[]> mix = new ArrayList<>();
            for (int i = 0; i < ORDERS; i++) {
                mix.add(new String[] { "T-" + i, Topics.payment("T-" + i, 100 + i) });
            }
            int duplicates = ORDERS * 30 / 70; // 30% of everything published
            for (int i = 0; i < duplicates; i++) {
                String[] original = mix.get(random.nextInt(ORDERS));
                // half on the original's partition, half keyed anew (either partition)
                mix.add(new String[] { i % 2 == 0 ? original[0] : UUID.randomUUID().toString(), original[1] });
            }
            Collections.shuffle(mix, random);
            for (String[] record : mix) {
                topics.publish(record[0], record[1]);
            }

            await().atMost(Duration.ofSeconds(180)).until(() -> Charges.distinctOrdersLike("T-%") == ORDERS
                    && topics.uncommitted() == 0);
            double handledA = a.metric("idempotency_deliveries_total", "outcome=\"handled\"", "channel=\"payments\"");
            double handledB = b.metric("idempotency_deliveries_total", "outcome=\"handled\"", "channel=\"payments\"");
            double dropped = a.metric("idempotency_deliveries_total", "outcome=\"duplicate\"")
                    + b.metric("idempotency_deliveries_total", "outcome=\"duplicate\"");
            double busy = a.metric("idempotency_deliveries_total", "outcome=\"busy\"")
                    + b.metric("idempotency_deliveries_total", "outcome=\"busy\"");
            System.out.println("KAFKA TWO CONSUMERS: published " + mix.size() + " (" + duplicates + " duplicates) for "
                    + ORDERS + " orders; charges " + Charges.like("T-%") + "; handled A=" + handledA
                    + " B=" + handledB + "; duplicates dropped " + dropped + "; busy, retried in place " + busy);
            assertEquals(ORDERS, Charges.like("T-%"), "charges == distinct orders");
            assertEquals(ORDERS, (long) (handledA + handledB), "each order handled once across both processes");
            assertTrue(handledA > 0 && handledB > 0, "both consumers took part");
            assertTrue(dropped >= duplicates, "every duplicate acknowledged without a charge");
        }
    }
}
