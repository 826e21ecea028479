package io.quarkiverse.idempotency.memory.app;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * The packaged application without Hibernate ORM (the native executable in native mode), on the real RabbitMQ: the
 * memory store deduplicates, the key function's missing key dead-letters, health and metrics answer.
 */
@QuarkusIntegrationTest
@WithTestResource(Broker.class)
class OrderLogIT {

    static Connection connection;
    static Channel channel;

    @BeforeAll
    static void connect() throws Exception {
        TestServices.Server broker = TestServices.rabbitmq();
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(broker.host());
        factory.setPort(broker.port());
        factory.setUsername(broker.user());
        factory.setPassword(broker.password());
        connection = factory.newConnection("memory-it");
        channel = connection.createChannel();
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            channel.queuePurge("memory-orders");
            channel.queuePurge("memory-orders.dlq");
            return true;
        });
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @Test
    void theSameOrderThreeTimesIsLoggedOnceAndAKeylessOneIsDeadLettered() throws Exception {
        double before = logged();
        String order = "M-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            publish(UUID.randomUUID().toString(), order + ";100");
        }
        publish("keyless", "no order id");
        GetResponse dead = await().atMost(Duration.ofSeconds(30)).until(() -> channel.basicGet("memory-orders.dlq", true),
                r -> r != null);
        assertEquals("keyless", dead.getProps().getMessageId());
        assertEquals("key-missing", String.valueOf(dead.getProps().getHeaders().get("x-idempotency-outcome")));
        await().atMost(Duration.ofSeconds(30)).until(() -> duplicates() >= 2);
        assertEquals(before + 1, logged(), 0.0, "three deliveries, one order logged");
        given().get("/q/health/ready").then().statusCode(200).body(containsString("InMemoryIdempotencyStore"));
    }

    private static void publish(String messageId, String body) throws Exception {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("text/plain").messageId(messageId)
                .headers(Map.of()).build();
        channel.basicPublish("", "memory-orders", props, body.getBytes(StandardCharsets.UTF_8));
    }

    private static double logged() {
        return metric("orders_logged ([0-9.E]+)");
    }

    private static double duplicates() {
        return metric("idempotency_deliveries_total\\{channel=\"orders\",outcome=\"duplicate\"[^}]*} ([0-9.E]+)");
    }

    private static double metric(String pattern) {
        String body = given().get("/q/metrics").then().statusCode(200).extract().asString();
        Matcher m = Pattern.compile(pattern).matcher(body);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }
}
