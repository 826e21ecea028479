package io.quarkiverse.idempotency.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;

/**
 * The demo application on the real RabbitMQ and PostgreSQL.
 */
@QuarkusTest
class PaymentsTest extends BrokerTestSupport {

    /** Longer than the requeue delay (1 s) and the first retry delay: a redelivery charging again would show in it. */
    static final Duration REDELIVERY_WINDOW = Duration.ofMillis(2500);

    @Inject
    FlakyGateway gateway;

    @Inject
    MeterRegistry metrics;

    @BeforeEach
    void reset() {
        gateway.reset();
    }

    @Test
    void onePaymentPublishedThreeTimesIsChargedOnceAndAckedThreeTimes() {
        double firstBefore = deliveries("handled");
        double duplicatesBefore = deliveries("duplicate");
        String id = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            broker.publishToQueue(id, Broker.payment("A-1", 1299));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> deliveries("handled") - firstBefore
                + deliveries("duplicate") - duplicatesBefore == 3 && broker.ready(Broker.QUEUE) == 0);
        assertEquals(1, Ledger.charges("A-1"), "one charge");
        assertEquals(1, deliveries("handled") - firstBefore);
        assertEquals(2, deliveries("duplicate") - duplicatesBefore, "the other two acked as duplicates");
        assertEquals(0, broker.ready(Broker.DLQ));
        await().atMost(Duration.ofSeconds(5)).until(() -> Ledger.claims() == 0);
    }

    @Test
    void sameOrderUnderTwoMessageIdsIsChargedOnce() {
        double handledBefore = deliveries("handled");
        double duplicatesBefore = deliveries("duplicate");
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment("A-2", 500));
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment("A-2", 500));
        // both deliveries settled: one handled, one acked as a duplicate (a busy one comes back after the requeue delay)
        await().atMost(Duration.ofSeconds(20)).until(() -> deliveries("handled") - handledBefore == 1
                && deliveries("duplicate") - duplicatesBefore == 1 && broker.ready(Broker.QUEUE) == 0);
        // longer than the requeue delay: a redelivery that charged again would show
        await().during(REDELIVERY_WINDOW).atMost(REDELIVERY_WINDOW.plusSeconds(5))
                .until(() -> Ledger.charges("A-2") == 1);
    }

    @Test
    void sameMessageIdOnTwoQueuesRunsEachConsumerOnce() {
        String id = UUID.randomUUID().toString();
        broker.publish(id, Broker.payment("A-3", 700));
        broker.publish(id, Broker.payment("A-3", 700));
        await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges("A-3") == 1 && Ledger.auditEntries("A-3") == 1
                && broker.ready(Broker.QUEUE) == 0 && broker.ready(Broker.AUDIT_QUEUE) == 0);
        await().during(REDELIVERY_WINDOW).atMost(REDELIVERY_WINDOW.plusSeconds(5))
                .until(() -> Ledger.charges("A-3") == 1 && Ledger.auditEntries("A-3") == 1);
    }

    @Test
    void handlerFailingFourTimesIsRetriedAfterOneTwoFourAndEightSecondsThenChargedOnce() {
        double retriedBefore = deliveries("retried");
        gateway.failFirst("A-4", 4);
        broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment("A-4", 900));
        await().atMost(Duration.ofSeconds(40)).until(() -> Ledger.charges("A-4") == 1);
        assertEquals(5, gateway.calls("A-4"), "four retries really ran: the fifth attempt, the last of the budget");
        List<Long> calls = gateway.callTimes("A-4");
        // the defaults: 1 s, doubling, each moved by up to 20% (jitter); at most a second more for the redelivery
        long delay = 1000;
        for (int i = 1; i < calls.size(); i++, delay *= 2) {
            long gap = TimeUnit.NANOSECONDS.toMillis(calls.get(i) - calls.get(i - 1));
            assertTrue(gap >= delay * 8 / 10, "retry " + i + " waited " + gap + " ms, less than " + delay + " ms - 20%");
            assertTrue(gap <= delay * 12 / 10 + 1000, "retry " + i + " waited " + gap + " ms, more than " + delay
                    + " ms + 20% + 1 s");
        }
        assertEquals(4, deliveries("retried") - retriedBefore);
        assertEquals(0, broker.ready(Broker.DLQ));
        await().during(REDELIVERY_WINDOW).atMost(REDELIVERY_WINDOW.plusSeconds(5))
                .until(() -> Ledger.charges("A-4") == 1);
    }

    @Test
    void paymentWithoutOrderIdIsDeadLetteredAndNeverCharged() {
        broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment(null, 100));
        await().atMost(Duration.ofSeconds(20)).until(() -> broker.ready(Broker.DLQ) == 1);
        assertEquals(0, Ledger.charges());
    }

    @Test
    void secondDeliveryWhileTheFirstRunsIsNotAckedEarlyAndChargesOnce() throws InterruptedException {
        double busyBefore = deliveries("busy");
        double duplicatesBefore = deliveries("duplicate");
        CountDownLatch release = gateway.hold("A-5");
        String id = UUID.randomUUID().toString();
        broker.publishToQueue(id, Broker.payment("A-5", 1000));
        assertTrue(gateway.awaitStarted("A-5"));
        broker.publishToQueue(id, Broker.payment("A-5", 1000));
        await().atMost(Duration.ofSeconds(20)).until(() -> deliveries("busy") - busyBefore >= 1);
        assertEquals(1, gateway.calls("A-5"), "the second delivery did not run");
        assertEquals(0, Ledger.charges("A-5"), "nothing committed yet");

        release.countDown();
        await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges("A-5") == 1 && broker.ready(Broker.QUEUE) == 0
                && deliveries("duplicate") - duplicatesBefore == 1);
        assertEquals(1, gateway.calls("A-5"));
        assertEquals(0, broker.ready(Broker.DLQ), "a busy delivery is never dead-lettered");
    }

    private double deliveries(String outcome) {
        return Meters.deliveries(metrics, outcome);
    }
}
