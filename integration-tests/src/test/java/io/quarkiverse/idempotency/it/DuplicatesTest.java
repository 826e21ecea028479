package io.quarkiverse.idempotency.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkiverse.idempotency.testing.LogCapture;
import io.quarkus.test.junit.QuarkusTest;

/**
 * What the demo application tells about its duplicates, on the real RabbitMQ and PostgreSQL: where each comes from
 * (a republish, a redelivery, a takeover), whether its payload is the one its key was written with, and how old its key
 * was. The payments channel warns of a payload mismatch (the default): the message is acked as a duplicate, counted and
 * logged once per key.
 */
@QuarkusTest
class DuplicatesTest extends BrokerTestSupport {

    @Inject
    FlakyGateway gateway;

    @Inject
    MeterRegistry metrics;

    /** Orders of this run only: the application (and its cache of confirmed keys) lives on between test classes. */
    static final String RUN = Long.toString(System.nanoTime(), 36);

    @BeforeEach
    void reset() {
        gateway.reset();
    }

    static String order(int n) {
        return "DUP-" + RUN + "-" + n;
    }

    @Test
    void theKeyKeepsTheIdAndFingerprintOfTheMessageThatWroteIt() {
        String id = "m-" + UUID.randomUUID();
        broker.publishToQueue(id, Broker.payment(order(1), 100));
        await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges(order(1)) == 1 && Ledger.claims() == 0);
        assertEquals(id + " 22", Ledger.text("SELECT message_id || ' ' || length(fingerprint) FROM idempotency_record"
                + " WHERE scoped_key = 'payments:charge:" + order(1) + "'"));
    }

    @Test
    void aRepublishWithAnotherPayloadIsAckedCountedAsAMismatchAndLoggedOncePerKey() {
        double mismatches = duplicates("republish", "mismatch");
        double same = duplicates("republish", "same");
        try (LogCapture log = LogCapture.install()) {
            broker.publishToQueue("m-first-" + UUID.randomUUID(), Broker.payment(order(2), 100));
            await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges(order(2)) == 1 && Ledger.claims() == 0);
            broker.publishToQueue("m-second-" + UUID.randomUUID(), Broker.payment(order(2), 900));
            broker.publishToQueue("m-third-" + UUID.randomUUID(), Broker.payment(order(2), 900));
            broker.publishToQueue("m-fourth-" + UUID.randomUUID(), Broker.payment(order(2), 100));
            await().atMost(Duration.ofSeconds(20)).until(() -> duplicates("republish", "mismatch") - mismatches == 2
                    && duplicates("republish", "same") - same == 1 && broker.ready(Broker.QUEUE) == 0);
            assertEquals(1, Ledger.charges(order(2)), "the mismatching payments were not charged");
            assertEquals(100, Ledger.count("SELECT sum(amount_cents) FROM charge WHERE order_id = '" + order(2) + "'"));
            assertEquals(0, broker.ready(Broker.DLQ), "warned, not dead-lettered");
            List<String> warnings = log.matching("with a different payload");
            assertEquals(1, warnings.size(), "logged once for the key: " + warnings);
            // the channel runs unordered: the second and third messages are answered concurrently, and whichever
            // mismatch is answered first is the one named (never the fourth, whose payload is the first one's)
            String warning = warnings.get(0);
            assertTrue(warning.startsWith("IDEMP2003: "), "logged with its code: " + warning);
            assertTrue(warning.contains("'payments:charge:" + order(2) + "'") && warning.contains("m-first-")
                    && (warning.contains("m-second-") || warning.contains("m-third-")) && !warning.contains("m-fourth-"),
                    warning);
        }
    }

    @Test
    void aMessageRequeuedWhileAnotherDeliveryHeldItsKeyIsARedelivery() {
        double redeliveries = duplicates("redelivery", "unknown");
        double busy = deliveries("busy");
        String id = "m-" + UUID.randomUUID();
        // another process holds the key on a live lease, for the message with the same id (its fingerprint unknown);
        // a lease long enough that the copy, requeued for a third of the channel's lease (10 s), never meets it run out
        Ledger.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, lease_until,"
                + " expires_at, attempts, message_id) VALUES ('payments:charge:" + order(3)
                + "', 'payments', 'CLAIMED', 'elsewhere#1', now(),"
                + " now() + interval '60 seconds', now() + interval '1 day', 0, '" + id + "')");
        broker.publishToQueue(id, Broker.payment(order(3), 300));
        // busy: the extension requeues it; meanwhile the holder confirms the key
        await().atMost(Duration.ofSeconds(10)).until(() -> deliveries("busy") - busy == 1);
        Ledger.execute("UPDATE idempotency_record SET state = 'CONFIRMED', lease_until = NULL, recorded_at = now()"
                + " WHERE scoped_key = 'payments:charge:" + order(3) + "'");
        await().atMost(Duration.ofSeconds(40)).until(() -> duplicates("redelivery", "unknown") - redeliveries == 1
                && broker.ready(Broker.QUEUE) == 0);
        assertEquals(0, Ledger.charges(order(3)), "the holder did the work; the redelivery did not run");
    }

    @Test
    void aClaimWhoseOwnerDiedIsTakenOverAndCountedAsATakeover() {
        double takeovers = duplicates("takeover", "unknown");
        Ledger.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, lease_until,"
                + " expires_at, attempts) VALUES ('payments:charge:" + order(4)
                + "', 'payments', 'CLAIMED', 'dead#1', now() - interval"
                + " '1 minute', now() - interval '1 second', now() + interval '1 day', 0)");
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment(order(4), 400));
        await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges(order(4)) == 1 && Ledger.claims() == 0);
        assertEquals(1, duplicates("takeover", "unknown") - takeovers);
        assertEquals(1,
                Ledger.count("SELECT attempts FROM idempotency_record WHERE scoped_key = 'payments:charge:" + order(4) + "'"),
                "the dead owner's attempt counted");
    }

    @Test
    void theAgeOfADuplicateIsHowLongAgoItsKeyWasConfirmed() {
        Timer ages = metrics.find("idempotency.duplicates.age").tag("channel", "payments").tag("origin", "republish")
                .timer();
        long before = ages == null ? 0 : ages.count();
        // a key confirmed an hour ago (its retention is a day)
        Ledger.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts, message_id) VALUES ('payments:charge:" + order(5) + "', 'payments', 'CONFIRMED', 'earlier#1',"
                + " now() - interval '1 hour', now() + interval '23 hours', 0, 'm-earlier')");
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment(order(5), 500));
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            Timer t = metrics.find("idempotency.duplicates.age").tag("channel", "payments").tag("origin", "republish")
                    .timer();
            return t != null && t.count() - before == 1;
        });
        Timer t = metrics.find("idempotency.duplicates.age").tag("channel", "payments").tag("origin", "republish")
                .timer();
        assertNotNull(t);
        double maxSeconds = t.max(java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(maxSeconds >= 3599 && maxSeconds < 3700, "the duplicate's key was an hour old: " + maxSeconds);
        assertEquals(0, Ledger.charges(order(5)));
    }

    private double duplicates(String origin, String payload) {
        return Meters.duplicates(metrics, origin, payload);
    }

    private double deliveries(String outcome) {
        return Meters.deliveries(metrics, outcome);
    }
}
