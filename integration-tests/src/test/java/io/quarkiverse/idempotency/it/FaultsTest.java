package io.quarkiverse.idempotency.it;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.idempotency.testing.LogCapture;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Outages mid-stream, through TCP proxies in front of the shared PostgreSQL and RabbitMQ: nothing lost, nothing twice.
 */
@QuarkusTest
@TestProfile(ProxiedServices.class)
class FaultsTest extends BrokerTestSupport {

    @Inject
    FlakyGateway gateway;

    @Inject
    MeterRegistry metrics;

    @BeforeEach
    void reset() throws Exception {
        ProxiedServices.database.restore();
        ProxiedServices.broker.restore();
        gateway.reset();
    }

    @Test
    void databaseOutageRequeuesEverythingAndChargesEachOnceAfterRecovery() throws Exception {
        List<String> ids = publish("DB", 0, 20);
        await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.charges() == 20);

        double storeErrorsBefore = deliveries("store-error");
        double duplicatesBefore = deliveries("duplicate");
        ProxiedServices.database.cut();
        ids.addAll(publish("DB", 20, 40));
        for (int i = 0; i < 5; i++) {
            broker.publishToQueue(ids.get(i), Broker.payment("DB-" + i, 100)); // redeliveries of handled ones
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> deliveries("store-error") - storeErrorsBefore >= 10);
        assertEquals(0, broker.ready(Broker.DLQ), "a store outage never dead-letters");
        given().get("/q/health/ready").then().statusCode(503).body(containsString("Idempotency store"));

        ProxiedServices.database.restore();
        await().atMost(Duration.ofSeconds(60)).until(() -> Ledger.distinctChargedOrders() == 40
                && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0
                && deliveries("duplicate") - duplicatesBefore >= 5);
        assertEquals(40, Ledger.charges(), "each payment charged exactly once");
        // and each charge's receipt, sent through the outbox, recorded once downstream under one id
        await().atMost(Duration.ofSeconds(60)).until(() -> Ledger.distinctReceiptOrders("DB-") == 40
                && Ledger.outboxRows() == 0);
        assertEquals(40, Ledger.receipts("DB-"));
        // the probe's answer may be up to two seconds old, and the broker channels report their own readiness
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        assertEquals(0, broker.ready(Broker.DLQ));
    }

    @Test
    void brokerConnectionDropMidStreamLosesNothingAndChargesNothingTwice() throws Exception {
        publish("MQ", 0, 150);
        await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.charges() >= 30);
        ProxiedServices.broker.cut();
        long chargedAtCut = Ledger.charges();
        ProxiedServices.broker.restore();
        await().atMost(Duration.ofSeconds(90)).until(() -> Ledger.distinctChargedOrders() == 150
                && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0);
        assertEquals(150, Ledger.charges(), "each payment charged exactly once (" + chargedAtCut
                + " were charged when the connection dropped)");
        // the receipts in flight when the connection dropped were not confirmed: their rows are sent again, under
        // their ids, and recorded once downstream
        await().atMost(Duration.ofSeconds(90)).until(() -> Ledger.distinctReceiptOrders("MQ-") == 150
                && Ledger.outboxRows() == 0);
        assertEquals(150, Ledger.receipts("MQ-"), "one receipt per order");
        assertEquals(150, Ledger.distinctReceiptIds("MQ-"), "under one id each");
        assertEquals(0, broker.ready(Broker.DLQ));
    }

    @Test
    void delayedRedeliveriesPendingAcrossAReconnectAreDroppedNotSentOnTheNewChannel() throws Exception {
        LogCapture log = LogCapture.install();
        try {
            CountDownLatch release = gateway.hold("R-1");
            String id = UUID.randomUUID().toString();
            broker.publishToQueue(id, Broker.payment("R-1", 100));
            assertTrue(gateway.awaitStarted("R-1"));
            double busyBefore = deliveries("busy");
            double duplicatesBefore = deliveries("duplicate");
            for (int i = 0; i < 5; i++) {
                broker.publishToQueue(id, Broker.payment("R-1", 100)); // the broker delivering it again
            }
            // the five are busy, each waiting out its requeue delay unacknowledged
            await().atMost(Duration.ofSeconds(10)).until(() -> deliveries("busy") - busyBefore >= 5);
            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> Ledger.charges("R-1") == 1);
            // their AMQP channel goes while they wait: the broker requeues them itself
            ProxiedServices.broker.cut();
            ProxiedServices.broker.restore();
            await().atMost(Duration.ofSeconds(60)).until(() -> broker.ready(Broker.QUEUE) == 0
                    && deliveries("duplicate") - duplicatesBefore >= 5);
            // past every delay that was pending at the cut
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                    .until(() -> Ledger.charges("R-1") == 1);
            assertEquals(List.of(), log.matching("unknown delivery tag"),
                    "no delivery tag of the old channel was sent on the new one");
            assertEquals(0, broker.ready(Broker.DLQ));
        } finally {
            log.close();
        }
    }

    @Test
    void aPaymentHandledAcrossAReconnectIsAckedOnTheChannelThatDeliveredItNeverOnTheNewOne() throws Exception {
        CountDownLatch release = gateway.hold("X-1");
        broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment("X-1", 100));
        assertTrue(gateway.awaitStarted("X-1"));
        double busyBefore = deliveries("busy");
        double duplicatesBefore = deliveries("duplicate");
        // the connection drops while X-1 is being charged; the broker requeues it and the consumer comes back on a new
        // AMQP channel, which delivers X-1 again (busy: its charge is under way)
        ProxiedServices.broker.cut();
        ProxiedServices.broker.restore();
        await().atMost(Duration.ofSeconds(30)).until(() -> deliveries("busy") - busyBefore >= 1);
        LogCapture log = LogCapture.install();
        try {
            // The charge ends after the reconnect. Its ack under the old channel's delivery tag would reach the new
            // channel: there it acknowledges whichever message has that tag, or the broker closes the channel for an
            // unknown tag and the connector restarts its client, every message in flight delivered again.
            release.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.charges("X-1") == 1
                    && deliveries("duplicate") - duplicatesBefore >= 1);
            List<String> ids = publish("X", 2, 42);
            await().atMost(Duration.ofSeconds(60)).until(() -> Ledger.distinctChargedOrders() == 41
                    && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0);
            assertEquals(41, Ledger.charges(), "each payment charged exactly once (" + ids.size() + " after X-1)");
            assertEquals(List.of(), log.matching("Stopping rabbitmq client"),
                    "no ack under a delivery tag of the old channel closed the new one");
            assertEquals(List.of(), log.matching("unknown delivery tag"));
            assertEquals(0, broker.ready(Broker.DLQ));
        } finally {
            log.close();
        }
    }

    private List<String> publish(String prefix, int from, int to) {
        List<String> ids = new ArrayList<>();
        for (int i = from; i < to; i++) {
            String id = UUID.randomUUID().toString();
            ids.add(id);
            broker.publishToQueue(id, Broker.payment(prefix + "-" + i, 100));
        }
        return ids;
    }

    // a counter of this application's life, which earlier tests also counted: compare it with its value before
    private double deliveries(String outcome) {
        return Meters.deliveries(metrics, outcome);
    }
}
