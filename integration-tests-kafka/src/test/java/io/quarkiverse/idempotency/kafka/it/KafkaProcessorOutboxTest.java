package io.quarkiverse.idempotency.kafka.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import jakarta.inject.Inject;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;

/**
 * A {@code @ThroughOutbox} processor on the real Kafka and PostgreSQL: each refund's notice, returned by the processor,
 * is written to the outbox in the refund's transaction and reaches the topic once per refunded order, whatever the
 * republished records, from the outbox, each with the {@code ce_id} derived from its refund's key.
 */
@QuarkusTest
class KafkaProcessorOutboxTest {

    private static final String REFUNDS = "refunds";
    private static final String NOTICES = "refund-notices";
    private static final String NOTICES_CHANNEL = "refund-notices-out";

    @Inject
    Outbox outbox;

    Topics topics;

    @BeforeEach
    void open() {
        topics = new Topics();
    }

    @AfterEach
    void close() {
        topics.close();
    }

    @Test
    void eachRefundedOrderSendsOneNoticeUnderTheIdOfItsKey() {
        String run = "KR-" + UUID.randomUUID().toString().substring(0, 6) + "-";
        long sentBefore = outbox.counts().sentAtOnce();
        int orders = 10;
        for (int i = 0; i < orders; i++) {
            topics.publish(REFUNDS, run + i, Topics.payment(run + i, 500 + i), Map.of());
            topics.publish(REFUNDS, run + i, Topics.payment(run + i, 500 + i), Map.of()); // republished: one notice
        }
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Charges.eventsLike("refund " + run + "%") == orders && notices(run).size() == orders);
        Set<String> refunded = new HashSet<>();
        for (ConsumerRecord<String, String> notice : notices(run)) {
            String orderId = new JsonObject(notice.value()).getString("orderId");
            assertTrue(refunded.add(orderId), "one notice per order: " + orderId);
            Header id = notice.headers().lastHeader("ce_id");
            assertEquals(Outbox.outputId(new ScopedKey(REFUNDS, "charge:" + orderId), NOTICES_CHANNEL),
                    id == null ? null : new String(id.value(), StandardCharsets.UTF_8),
                    "the id the outbox gave it: derived from the refund's key");
        }
        assertEquals(orders, refunded.size());
        assertTrue(outbox.counts().sentAtOnce() - sentBefore >= orders, "sent from the outbox, at each commit");
        await().atMost(Duration.ofSeconds(30)).until(() -> Charges.count("SELECT count(*) FROM idempotency_outbox") == 0);
        assertEquals(orders, Charges.eventsLike("refund " + run + "%"), "each refunded once");
        assertEquals(orders, notices(run).size(), "nothing more");
    }

    private List<ConsumerRecord<String, String>> notices(String run) {
        return topics.records(NOTICES).stream().filter(r -> r.value().contains(run)).toList();
    }
}
