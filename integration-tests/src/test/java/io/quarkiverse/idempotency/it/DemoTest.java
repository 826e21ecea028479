package io.quarkiverse.idempotency.it;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import com.rabbitmq.client.GetResponse;

import io.quarkus.test.junit.QuarkusTest;

/**
 * The demo application seen only from outside (broker, database, HTTP), so that {@link DemoIT} runs the same tests
 * against the packaged application: the jar here, the native binary where GraalVM exists.
 */
@QuarkusTest
class DemoTest extends BrokerTestSupport {

    @Test
    void paymentPublishedThreeTimesIsChargedOnce() {
        String id = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            broker.publishToQueue(id, Broker.payment("D-1", 1299));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.charges("D-1") == 1
                && broker.ready(Broker.QUEUE) == 0 && Ledger.claims() == 0);
        // longer than the requeue delay (1 s): a redelivery that charged again would show
        await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(8)).until(() -> Ledger.charges("D-1") == 1);
        assertEquals(0, broker.ready(Broker.DLQ));
    }

    @Test
    void sameOrderUnderANewMessageIdIsChargedOnceAndKeylessIsDeadLettered() {
        broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment("D-2", 100));
        broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment("D-2", 100));
        broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment(null, 100));
        await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.charges("D-2") == 1
                && broker.ready(Broker.QUEUE) == 0 && broker.ready(Broker.DLQ) == 1);
    }

    @Test
    void anUnreadablePaymentIsDeadLetteredAtOnceWithTheReason() {
        broker.publishRaw("d-unreadable", "application/json", "[\"D-4\", 100]");
        GetResponse dead = await().atMost(Duration.ofSeconds(30)).until(broker::nextDeadLetter, r -> r != null);
        assertEquals("d-unreadable", dead.getProps().getMessageId());
        assertEquals("unreadable", String.valueOf(dead.getProps().getHeaders().get("x-idempotency-outcome")));
        assertEquals("payments", String.valueOf(dead.getProps().getHeaders().get("x-idempotency-channel")));
        assertTrue(String.valueOf(dead.getProps().getHeaders().get("x-idempotency-reason"))
                .contains("ClassCastException"), dead.getProps().getHeaders().toString());
    }

    @Test
    void readinessIncludesTheStoreAndMetricsCountOutcomes() {
        broker.publishToQueue(UUID.randomUUID().toString(), Broker.payment("D-3", 100));
        await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.charges("D-3") == 1);
        given().get("/q/health/ready").then().statusCode(200).body(containsString("Idempotency store"));
        given().get("/q/metrics").then().statusCode(200)
                .body(containsString("idempotency_deliveries_total{channel=\"payments\",outcome=\"handled\""))
                .body(containsString("idempotency_takeovers_total{channel=\"payments\""))
                .body(containsString("idempotency_claim_seconds"));
    }
}
