package io.quarkiverse.idempotency.jdbc.app;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * The packaged application on plain JDBC (the native executable in native mode: Agroal and the PostgreSQL driver, no
 * Hibernate), in production mode on the real RabbitMQ and PostgreSQL: its keys' table created at its first start,
 * each key committed with its charge, duplicates acked without a second charge, a failed attempt rolled back with its
 * charge, a message that keeps failing dead-lettered within its budget, readiness naming the database store.
 */
@QuarkusIntegrationTest
@WithTestResource(Servers.class)
class JdbcPaymentsIT {

    private static final String QUEUE = "jdbc-payments";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static RabbitQueues broker;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-jdbc-packaged");
        broker.purge(QUEUE);
    }

    @AfterAll
    static void disconnect() throws Exception {
        broker.close();
    }

    @Test
    void anOrderDeliveredThreeTimesIsChargedOnceByOneCommitWithItsKey() {
        broker.publish(QUEUE, "m-p1", RabbitQueues.payment("P-1", ""));
        broker.publish(QUEUE, "m-p1", RabbitQueues.payment("P-1", ""));
        broker.publish(QUEUE, "m-p1", RabbitQueues.payment("P-1", ""));
        broker.publish(QUEUE, "m-p2", RabbitQueues.payment("P-2", ""));
        await().atMost(WAIT).until(() -> charges("P-2") == 1 && broker.ready(QUEUE) == 0);
        assertEquals(1, charges("P-1"));
        assertEquals("CONFIRMED", text("SELECT state FROM idempotency_record WHERE scoped_key = ?", key("m-p1")));
        assertEquals(text("SELECT xmin::text FROM jdbc_charge WHERE order_id = ?", "P-1"),
                text("SELECT xmin::text FROM idempotency_record WHERE scoped_key = ?", key("m-p1")),
                "the charge and its key committed by one transaction");
    }

    @Test
    void aFailedAttemptIsRolledBackWithItsChargeAndAPoisonMessageIsDeadLettered() {
        broker.publish(QUEUE, "m-p3", RabbitQueues.payment("P-3", "\"failures\": 1"));
        broker.publish(QUEUE, "m-p4", RabbitQueues.payment("P-4", "\"failures\": 10"));
        await().atMost(WAIT).until(() -> "CONFIRMED"
                .equals(text("SELECT state FROM idempotency_record WHERE scoped_key = ?", key("m-p3"))));
        assertEquals(1, charges("P-3"), "the failed attempt's charge was rolled back with it");
        assertEquals("1", text("SELECT attempts::text FROM idempotency_record WHERE scoped_key = ?", key("m-p3")));
        GetResponse dead = await().atMost(WAIT).until(() -> broker.nextDeadLetter(QUEUE), d -> d != null);
        assertNotNull(dead);
        assertEquals("m-p4", dead.getProps().getMessageId());
        assertEquals("DEAD_LETTERED", text("SELECT state FROM idempotency_record WHERE scoped_key = ?", key("m-p4")));
        assertEquals(0, charges("P-4"));
    }

    @Test
    void readinessNamesTheDatabaseStore() {
        given().get("/q/health/ready").then().statusCode(200).body(containsString("DatabaseIdempotencyStore"));
    }

    /** The key of a message under the channel's scope (the default key is the message id). */
    private static String key(String messageId) {
        return QUEUE + ":" + messageId;
    }

    private static long charges(String orderId) {
        return Long.parseLong(text("SELECT count(*)::text FROM jdbc_charge WHERE order_id = ?", orderId));
    }

    private static String text(String sql, String parameter) {
        TestServices.Server db = TestServices.postgres();
        try (Connection c = DriverManager.getConnection(db.jdbcUrl(Servers.DATABASE), db.user(), db.password());
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
