package io.quarkiverse.idempotency.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import com.rabbitmq.client.GetResponse;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * With {@code payload-mismatch=dead-letter} on the payments channel, a second payment under an order id already
 * charged, with another amount, goes to the dead-letter queue without running (outcome {@code payload-mismatch}), while
 * the same payment again is acked as a duplicate.
 */
@QuarkusTest
@TestProfile(PayloadMismatchDeadLetterTest.DeadLetterMismatches.class)
class PayloadMismatchDeadLetterTest extends BrokerTestSupport {

    @Test
    void aMismatchingDuplicateIsDeadLetteredAndTheSamePayloadAcked() {
        String first = "m-first-" + UUID.randomUUID();
        String second = "m-second-" + UUID.randomUUID();
        broker.publishToQueue(first, Broker.payment("E-1", 100));
        await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges("E-1") == 1 && Ledger.claims() == 0);
        broker.publishToQueue(second, Broker.payment("E-1", 900));
        broker.publishToQueue("m-again-" + UUID.randomUUID(), Broker.payment("E-1", 100));
        await().atMost(Duration.ofSeconds(20)).until(() -> broker.ready(Broker.DLQ) == 1 && broker.ready(Broker.QUEUE) == 0);
        GetResponse dead = broker.nextDeadLetter();
        assertNotNull(dead);
        assertEquals(second, dead.getProps().getMessageId());
        Map<String, Object> headers = dead.getProps().getHeaders();
        assertEquals("payload-mismatch", String.valueOf(headers.get("x-idempotency-outcome")));
        String reason = String.valueOf(headers.get("x-idempotency-reason"));
        assertTrue(reason.contains(first) && reason.contains(second), reason);
        assertEquals(1, Ledger.charges("E-1"));
        assertEquals(100, Ledger.count("SELECT sum(amount_cents) FROM charge WHERE order_id = 'E-1'"));
        assertEquals("CONFIRMED " + first, Ledger.text("SELECT state || ' ' || message_id FROM idempotency_record"
                + " WHERE scoped_key = 'payments:charge:E-1'"), "the key is left as it was");
    }

    public static class DeadLetterMismatches implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.idempotency.channels.payments.payload-mismatch", "dead-letter");
        }
    }
}
