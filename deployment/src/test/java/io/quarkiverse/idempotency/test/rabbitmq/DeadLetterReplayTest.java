package io.quarkiverse.idempotency.test.rabbitmq;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.DeadLetterReplay;
import io.quarkiverse.idempotency.DeadLetterReplays;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkiverse.idempotency.test.management.ManagementApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.vertx.core.json.JsonObject;

/**
 * Dead letters replayed from the real RabbitMQ's dead-letter queue: 100 payments dead-lettered for two reasons; once
 * one cause is fixed, its 50 are replayed (keys released, copies confirmed, then removed from the dead-letter queue)
 * and charged once each, while the other 50 stay dead-lettered, in the queue and in the store; a copy replayed twice
 * (a replay stopped between the broker's confirm and the removal) is charged once; the endpoint replays for the role
 * only, and refuses bad input with what is wrong.
 */
class DeadLetterReplayTest {

    static final String PAYMENTS = "idempotency-test-replay";
    static final String DLQ = PAYMENTS + ".dlq";
    static final String DECLINED = "card declined by the issuer";
    static final String TIMED_OUT = "gateway timed out";

    @RegisterExtension
    static final QuarkusUnitTest APP = ManagementApps.withOperators(
            RabbitApps.app(new String[] { PAYMENTS }, Payments.class, RecordingKey.class, ManagementApps.class))
            .overrideConfigKey("quarkus.idempotency.retry.max-attempts", "2")
            .overrideConfigKey("quarkus.idempotency.retry.initial-delay", "100ms")
            .overrideConfigKey("mp.messaging.incoming." + PAYMENTS + ".max-outstanding-messages", "50");

    static Connection connection;
    static Channel amqp;

    @Inject
    Payments payments;

    @Inject
    DeadLetterReplays replays;

    @Inject
    DeadLetters deadLetters;

    @BeforeAll
    static void connect() throws Exception {
        connection = RabbitApps.connect();
        RabbitApps.purge(connection, PAYMENTS, DLQ);
        amqp = connection.createChannel();
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @BeforeEach
    void empty() throws Exception {
        amqp.queuePurge(DLQ);
        payments.charges.clear();
        Payments.DELIVERIES.clear();
        payments.faults.clear();
    }

    @Test
    void oneReasonOfAHundredDeadLettersIsReplayedAndChargedOnceWhileTheOtherStaysDeadLettered() throws Exception {
        payments.faults.addAll(Set.of(DECLINED, TIMED_OUT));
        for (int i = 0; i < 100; i++) {
            publish("m-" + i, i % 2 == 0 ? DECLINED : TIMED_OUT);
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> amqp.messageCount(DLQ) == 100);
        assertEquals(0, payments.charged(), "every attempt rolled back");

        payments.faults.remove(DECLINED); // the fix
        DeadLetterReplay replay = replays.replay(PAYMENTS, "DECLINED", 1000);
        assertEquals(new DeadLetterReplay(PAYMENTS, 50, 50, 50, 50), replay);
        await().atMost(Duration.ofSeconds(30)).until(() -> payments.charged() == 50);
        for (int i = 0; i < 100; i++) {
            String id = "m-" + i;
            assertEquals(i % 2 == 0 ? 1 : 0, payments.charges(id), id);
            assertEquals(i % 2 != 0, deadLetters.find(PAYMENTS, id).isPresent(), id + " dead-lettered");
        }
        await().during(Duration.ofMillis(500)).until(() -> amqp.messageCount(DLQ) == 50);
        for (GetResponse left = amqp.basicGet(DLQ, false); left != null; left = amqp.basicGet(DLQ, false)) {
            assertTrue(RabbitApps.header(left, "x-idempotency-reason").contains(TIMED_OUT),
                    "only the other reason is left: " + RabbitApps.header(left, "x-idempotency-reason"));
        }
        amqp.basicRecover(true);
        await().atMost(Duration.ofSeconds(10)).until(() -> amqp.messageCount(DLQ) == 50);

        assertEquals(new DeadLetterReplay(PAYMENTS, 0, 0, 50, 50), replays.replay(PAYMENTS, DECLINED, 1000),
                "nothing of that reason is left");
        payments.faults.clear();
        assertEquals(new DeadLetterReplay(PAYMENTS, 10, 10, 0, 40), replays.replay(PAYMENTS, null, 10),
                "a limit: the oldest ten");
        await().atMost(Duration.ofSeconds(30)).until(() -> payments.charged() == 60);
    }

    @Test
    void aCopyReplayedTwiceIsChargedOnceAndItsCopiesLoseTheDeadLetterHeaders() throws Exception {
        payments.faults.add(DECLINED);
        publish("twice", DECLINED);
        GetResponse dead = await().atMost(Duration.ofSeconds(30)).until(() -> amqp.basicGet(DLQ, true),
                r -> r != null);
        // the dead letter twice in the queue: as a replay stopped after the confirm and before the removal leaves it
        amqp.basicPublish("", DLQ, dead.getProps(), dead.getBody());
        amqp.basicPublish("", DLQ, dead.getProps(), dead.getBody());
        int attempts = Payments.DELIVERIES.get("twice").get();
        payments.faults.clear();
        assertEquals(new DeadLetterReplay(PAYMENTS, 1, 1, 0, 1), replays.replay(PAYMENTS, null, 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> payments.charges("twice") == 1);
        assertEquals(new DeadLetterReplay(PAYMENTS, 1, 0, 0, 0), replays.replay(PAYMENTS, null, 1),
                "moved back, its key released before already");
        await().atMost(Duration.ofSeconds(30)).until(() -> Payments.DELIVERIES.get("twice").get() == attempts + 2);
        await().during(Duration.ofMillis(500)).until(() -> payments.charges("twice") == 1);
        Map<String, Object> headers = Payments.HEADERS.get("twice");
        assertNull(headers.get("x-idempotency-reason"), "the copy is the message, not the dead letter: " + headers);
        assertNull(headers.get("x-idempotency-key"), String.valueOf(headers));
        assertEquals("kept", String.valueOf(headers.get("x-custom")), "the message's own headers are kept");
        assertFalse(deadLetters.find(PAYMENTS, "twice").isPresent());
    }

    @Test
    void theEndpointReplaysForTheRoleOnlyAndRefusesBadInput() throws Exception {
        payments.faults.add(TIMED_OUT);
        publish("by-endpoint", TIMED_OUT);
        await().atMost(Duration.ofSeconds(30)).until(() -> amqp.messageCount(DLQ) == 1);
        String replay = ManagementApps.URL + "/replay";
        given().contentType("application/json").queryParam("channel", PAYMENTS).post(replay).then().statusCode(401);
        given().auth().preemptive().basic("viewer", "view-secret").contentType("application/json")
                .queryParam("channel", PAYMENTS).post(replay).then().statusCode(403);
        given().auth().preemptive().basic("operator", "op-secret").queryParam("channel", PAYMENTS).post(replay)
                .then().statusCode(415);
        given().auth().preemptive().basic("operator", "op-secret").contentType("application/json").post(replay)
                .then().statusCode(400).body("error", containsString("channel"));
        given().auth().preemptive().basic("operator", "op-secret").contentType("application/json")
                .queryParam("channel", "no-such-channel").queryParam("all", "true").post(replay).then().statusCode(400)
                .body("error", containsString("no-such-channel"));
        given().auth().preemptive().basic("operator", "op-secret").contentType("application/json")
                .queryParam("channel", PAYMENTS).queryParam("all", "true").queryParam("limit", "0").post(replay)
                .then().statusCode(400).body("error", containsString("limit"));
        // every dead letter of the channel only when asked for: a reason, or all=true
        given().auth().preemptive().basic("operator", "op-secret").contentType("application/json")
                .queryParam("channel", PAYMENTS).post(replay).then().statusCode(400)
                .body("error", containsString("all=true"));
        given().auth().preemptive().basic("operator", "op-secret").contentType("application/json")
                .queryParam("channel", PAYMENTS).queryParam("reason", " ").post(replay).then().statusCode(400)
                .body("error", containsString("all=true"));
        assertEquals(1, amqp.messageCount(DLQ), "nothing replayed by a refused call");

        payments.faults.clear();
        given().auth().preemptive().basic("operator", "op-secret").contentType("application/json")
                .queryParam("channel", PAYMENTS).queryParam("reason", "timed out").post(replay).then().statusCode(200)
                .body("replayed", equalTo(1)).body("released", equalTo(1)).body("skipped", equalTo(0))
                .body("left", equalTo(0));
        await().atMost(Duration.ofSeconds(30)).until(() -> payments.charges("by-endpoint") == 1);
        assertThrows(IllegalArgumentException.class, () -> replays.replay(PAYMENTS, null, 10_001));
    }

    private static void publish(String messageId, String fault) throws Exception {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType("application/json")
                .messageId(messageId).deliveryMode(2).headers(Map.of("x-custom", "kept")).build();
        amqp.basicPublish("", PAYMENTS, properties,
                new JsonObject().put("id", messageId).put("fault", fault).encode()
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Keys a payment by its id, and notes each delivery that reached the method's interceptor, with its headers. */
    public static class RecordingKey implements KeyFunction<JsonObject> {

        @Override
        public String key(JsonObject payment, Metadata metadata) {
            String id = payment.getString("id");
            Payments.DELIVERIES.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
            metadata.get(IncomingRabbitMQMetadata.class).ifPresent(m -> Payments.HEADERS.put(id, m.getHeaders()));
            return id;
        }
    }

    @Singleton
    static class Payments {

        final Set<String> faults = ConcurrentHashMap.newKeySet();
        final Map<String, AtomicInteger> charges = new ConcurrentHashMap<>();
        static final Map<String, AtomicInteger> DELIVERIES = new ConcurrentHashMap<>();
        static final Map<String, Map<String, Object>> HEADERS = new ConcurrentHashMap<>();

        @Incoming(PAYMENTS)
        @Idempotent(key = RecordingKey.class)
        void charge(JsonObject payment) {
            String fault = payment.getString("fault");
            if (faults.contains(fault)) {
                throw new IllegalStateException(fault);
            }
            charges.computeIfAbsent(payment.getString("id"), id -> new AtomicInteger()).incrementAndGet();
        }

        int charges(String id) {
            AtomicInteger count = charges.get(id);
            return count == null ? 0 : count.get();
        }

        int charged() {
            return charges.values().stream().mapToInt(AtomicInteger::get).sum();
        }
    }
}
