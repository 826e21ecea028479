package io.quarkiverse.idempotency.kafka.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import jakarta.inject.Inject;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;

/**
 * The Kafka outcomes on the real broker and PostgreSQL: a republished order, records without a key, and a key being
 * handled elsewhere, which holds its partition without committing past it.
 */
@QuarkusTest
class KafkaPaymentsTest {

    @Inject
    MeterRegistry metrics;

    @Inject
    Notices notices;

    Topics topics;

    @BeforeEach
    void open() {
        topics = new Topics();
    }

    @AfterEach
    void close() {
        topics.close();
    }

    /**
     * A channel whose records the connector writes as CloudEvents: the connector writes the CloudEvent's id itself, a
     * new random one for each record, unless the message names it; the outbox names its row's id there, so that every
     * copy of the row (the one sent after the commit, any the relay sends again) carries one {@code ce_id}, the row's.
     */
    @Test
    void anOutboxRecordWrittenAsACloudEventCarriesItsRowsIdAsTheEventsId() {
        String text = "notice " + UUID.randomUUID();
        String id = notices.send(text);
        ConsumerRecord<String, String> record = await().atMost(Duration.ofSeconds(30))
                .until(() -> topics.records(KafkaServices.NOTICES).stream().filter(r -> text.equals(r.value()))
                        .findFirst().orElse(null), r -> r != null);
        List<String> ids = new ArrayList<>();
        record.headers().headers("ce_id").forEach(h -> ids.add(new String(h.value(), StandardCharsets.UTF_8)));
        assertEquals(List.of(id), ids, "one CloudEvent id, the outbox row's");
        assertEquals("notice", new String(record.headers().lastHeader("ce_type").value(), StandardCharsets.UTF_8),
                "written as a CloudEvent by the connector");
    }

    @Test
    void anOrderRepublishedAsANewRecordIsChargedOnce() {
        double duplicatesBefore = deliveries("duplicate");
        double republishedBefore = republished();
        // an order of this run only: the shared topics may still hold records of earlier runs
        String order = "A-" + UUID.randomUUID().toString().substring(0, 8);
        topics.publish(order, Topics.payment(order, 1299));
        // the outbox republishes it: another record, another offset, maybe another partition
        topics.publish("outbox-7", Topics.payment(order, 1299));
        topics.publish(order, Topics.payment(order, 1299));
        await().atMost(Duration.ofSeconds(30)).until(() -> deliveries("duplicate") - duplicatesBefore >= 2
                && topics.uncommitted() == 0);
        assertEquals(1, Charges.of(order), "one charge for three records of one order");
        // its receipt went through the outbox to the topic receipts, under a ce_id and keyed by its order, and was
        // recorded once downstream
        await().atMost(Duration.ofSeconds(30)).until(() -> Charges.count("SELECT count(*) FROM receipt WHERE order_id = ?",
                order) >= 1 && Charges.count("SELECT count(*) FROM idempotency_outbox") == 0);
        assertEquals(1, Charges.count("SELECT count(*) FROM receipt WHERE order_id = ? AND message_id <> '?'", order),
                "one receipt, with its id");
        assertEquals(1, Charges.count("SELECT count(*) FROM receipt WHERE order_id = ? AND message_key = ?", order,
                order), "the record's key is the order's id");
        assertEquals(2, republished() - republishedBefore,
                "new records (other positions) with the same payload: republishes, not redeliveries");
    }

    private double republished() {
        var counter = metrics.find("idempotency.duplicates").tag("channel", "payments").tag("origin", "republish")
                .tag("payload", "same").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void recordsWithoutAKeyOrUnreadableGoToTheDeadLetterTopicAndThePartitionMovesOn() {
        int before = topics.deadLetters().size();
        double unreadableBefore = deliveries("unreadable");
        topics.publish("K", "{\"amountCents\":500}");
        topics.publish("K", "not json at all");
        topics.publish("K", "[1, 2]");
        topics.publish("K", Topics.payment("K-1", 700));
        await().atMost(Duration.ofSeconds(30)).until(() -> Charges.of("K-1") == 1 && topics.uncommitted() == 0);
        List<Topics.DeadLetter> letters = await().atMost(Duration.ofSeconds(10))
                .until(() -> topics.deadLetters(), l -> l.size() >= before + 3).subList(before, before + 3);
        assertEquals(List.of("{\"amountCents\":500}", "not json at all", "[1, 2]"),
                letters.stream().map(Topics.DeadLetter::value).toList());
        assertEquals(List.of("key-missing", "unreadable", "unreadable"),
                letters.stream().map(l -> l.headers().get("x-idempotency-outcome")).toList());
        for (Topics.DeadLetter letter : letters) {
            assertEquals("payments", letter.headers().get("x-idempotency-channel"), letter.toString());
            assertEquals(KafkaServices.TOPIC, letter.headers().get("dead-letter-topic"), letter.toString());
        }
        assertEquals(2, deliveries("unreadable") - unreadableBefore, "each unreadable record counted once");
    }

    @Test
    void aKeyBeingHandledElsewhereHoldsItsPartitionUntilTheOtherDeliveryEnds() throws Exception {
        // another consumer claimed B-1 a moment ago and is still charging it
        Charges.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " lease_until) VALUES ('payments:charge:B-1', 'payments', 'CLAIMED', 'elsewhere', now(),"
                + " now() + interval '1 day', now() + interval '1 minute')");
        double busyBefore = deliveries("busy");
        topics.publish("B", Topics.payment("B-1", 100));
        topics.publish("B", Topics.payment("B-2", 200)); // behind it on the same partition
        await().atMost(Duration.ofSeconds(20)).until(() -> deliveries("busy") - busyBefore >= 1);
        assertEquals(0, Charges.of("B-1") + Charges.of("B-2"), "B-2 waits behind B-1, which waits for its holder");
        // three commit intervals (500 ms here) pass: nothing is committed past the busy record meanwhile
        await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> topics.uncommitted() >= 2);

        // the other delivery fails and gives its claim up: B-1 is charged here, once, then B-2
        Charges.execute("DELETE FROM idempotency_record WHERE scoped_key = 'payments:charge:B-1'");
        await().atMost(Duration.ofSeconds(20)).until(() -> Charges.of("B-2") == 1 && topics.uncommitted() == 0);
        assertEquals(List.of("B-1", "B-2"), Charges.chargedInOrder("B-1", "B-2"));
    }

    @Test
    void aPoisonRecordIsDeadLetteredAfterItsBudgetAndThePartitionMovesOn() {
        int before = topics.deadLetters().size();
        String poison = "P-" + "9".repeat(300); // longer than the charge table's order id: every attempt fails
        topics.publish("P", Topics.payment(poison, 100));
        topics.publish("P", Topics.payment("P-after", 200)); // behind it on the same partition
        await().atMost(Duration.ofSeconds(60)).until(() -> Charges.of("P-after") == 1 && topics.uncommitted() == 0);
        assertEquals(0, Charges.of(poison));
        Topics.DeadLetter letter = await().atMost(Duration.ofSeconds(10))
                .until(() -> topics.deadLetters(), l -> l.size() > before).get(before);
        assertEquals("dead-lettered", letter.headers().get("x-idempotency-outcome"));
        assertEquals("5", letter.headers().get("x-idempotency-attempts"), "after its budget of five attempts");
        assertEquals(Topics.payment(poison, 100), letter.value());
    }

    @Test
    void aRecordRetriedInPlaceIsLetGoWhenItsPartitionIsRevoked() {
        // another consumer holds R-1; its record, on partition 0, is retried in place here
        Charges.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " lease_until) VALUES ('payments:charge:R-1', 'payments', 'CLAIMED', 'elsewhere', now(),"
                + " now() + interval '1 day', now() + interval '1 minute')");
        double busyBefore = deliveries("busy");
        topics.publish(0, "R", Topics.payment("R-1", 100));
        await().atMost(Duration.ofSeconds(20)).until(() -> deliveries("busy") - busyBefore >= 1);

        try (KafkaConsumer<String, String> rival = topics.joinGroup()) {
            // a rebalance gives partition 0 to the newcomer (which never commits)
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                rival.poll(Duration.ofMillis(200));
                return rival.assignment().contains(new TopicPartition(KafkaServices.TOPIC, 0));
            });
            // the holder gives the key up: a consumer that still retried the record would now charge it, though
            // partition 0 is no longer its own
            Charges.execute("DELETE FROM idempotency_record WHERE scoped_key = 'payments:charge:R-1'");
            long until = System.nanoTime() + Duration.ofSeconds(12).toNanos();
            while (System.nanoTime() < until) {
                rival.poll(Duration.ofMillis(200));
                assertEquals(0, Charges.of("R-1"), "not charged by a consumer that lost its partition");
            }
        }
        // the newcomer left: partition 0 comes back, and its record is charged once
        await().atMost(Duration.ofSeconds(60)).until(() -> Charges.of("R-1") == 1 && topics.uncommitted() == 0);
        assertEquals(1, Charges.of("R-1"));
    }

    @Test
    void aKeyConfirmedElsewhereWhileItsRecordWaitsIsADuplicate() {
        Charges.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " lease_until) VALUES ('payments:charge:C-1', 'payments', 'CLAIMED', 'elsewhere', now(),"
                + " now() + interval '1 day', now() + interval '1 minute')");
        double busyBefore = deliveries("busy");
        double duplicatesBefore = deliveries("duplicate");
        topics.publish("C", Topics.payment("C-1", 100));
        await().atMost(Duration.ofSeconds(20)).until(() -> deliveries("busy") - busyBefore >= 1);
        // the other delivery charged it and committed
        Charges.execute("INSERT INTO charge (order_id, amount_cents, charged_at) VALUES ('C-1', 100, now())");
        Charges.execute("UPDATE idempotency_record SET state = 'CONFIRMED', lease_until = NULL"
                + " WHERE scoped_key = 'payments:charge:C-1'");
        await().atMost(Duration.ofSeconds(20)).until(() -> deliveries("duplicate") - duplicatesBefore >= 1
                && topics.uncommitted() == 0);
        assertEquals(1, Charges.of("C-1"));
    }

    private double deliveries(String outcome) {
        var counter = metrics.find("idempotency.deliveries").tag("channel", "payments").tag("outcome", outcome)
                .counter();
        return counter == null ? 0 : counter.count();
    }
}
