package io.quarkiverse.idempotency.kafka.it;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.idempotency.testing.TcpProxy;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * The store goes down mid-stream (a TCP proxy in front of PostgreSQL is cut): the records wait in place, none is
 * committed past or dead-lettered, and each is charged once, in order, when the store is back.
 */
@QuarkusTest
@TestProfile(StoreOutageTest.ProxiedDatabase.class)
class StoreOutageTest {

    static volatile TcpProxy database;

    @Inject
    MeterRegistry metrics;

    @Test
    void recordsWaitInPlaceWhileTheStoreIsDownAndAreChargedOnceInOrderAfterwards() throws Exception {
        try (Topics topics = new Topics()) {
            topics.publish("D", Topics.payment("D-0", 100));
            await().atMost(Duration.ofSeconds(30)).until(() -> Charges.of("D-0") == 1 && topics.uncommitted() == 0);
            int deadLettersBefore = topics.deadLetters().size();

            database.cut();
            double storeErrorsBefore = deliveries("store-error");
            for (int i = 1; i <= 5; i++) {
                topics.publish("D", Topics.payment("D-" + i, 100));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> deliveries("store-error") - storeErrorsBefore >= 2);
            assertEquals(5, topics.uncommitted(), "nothing committed past a record the store could not take");
            given().get("/q/health/ready").then().statusCode(503);

            database.restore();
            await().atMost(Duration.ofSeconds(60)).until(() -> Charges.of("D-5") == 1 && topics.uncommitted() == 0);
            assertEquals(List.of("D-0", "D-1", "D-2", "D-3", "D-4", "D-5"),
                    Charges.chargedInOrder("D-0", "D-1", "D-2", "D-3", "D-4", "D-5"), "each once, in order");
            assertEquals(deadLettersBefore, topics.deadLetters().size(), "a store outage never dead-letters");
            assertTrue(deliveries("store-error") - storeErrorsBefore >= 2);
        }
    }

    private double deliveries(String outcome) {
        var counter = metrics.find("idempotency.deliveries").tag("channel", "payments").tag("outcome", outcome)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    public static class ProxiedDatabase implements QuarkusTestProfile {

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.datasource.jdbc.acquisition-timeout", "2s",
                    "quarkus.idempotency.requeue-delay", "1s");
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(Proxy.class));
        }
    }

    public static class Proxy implements QuarkusTestResourceLifecycleManager {

        @Override
        public Map<String, String> start() {
            try {
                database = TcpProxy.inFrontOfDatabase(Charges.url());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return Map.of("quarkus.datasource.jdbc.url", database.jdbcUrl(Charges.url()));
        }

        /** After {@link KafkaServices}, whose address this replaces. */
        @Override
        public int order() {
            return 1;
        }

        @Override
        public void stop() {
            if (database != null) {
                database.close();
            }
        }
    }
}
