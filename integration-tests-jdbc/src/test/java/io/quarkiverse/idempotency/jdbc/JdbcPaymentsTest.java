package io.quarkiverse.idempotency.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application on plain JDBC (Agroal and the PostgreSQL driver, no Hibernate at all), on the real RabbitMQ and
 * PostgreSQL: the build chooses the database store, its table is created at startup, a {@code @Transactional}
 * handler's key commits with its work in one transaction, duplicates are acked without running, and a failing handler's
 * rollback takes its insert with it until the message is dead-lettered within its budget.
 */
class JdbcPaymentsTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = JdbcServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(JdbcPayments.class,
                    JdbcServices.class)));

    private static final String QUEUE = "jdbc-payments";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static RabbitQueues broker;

    @Inject
    IdempotencyStore store;

    @Inject
    JdbcPayments payments;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-jdbc-it");
    }

    @AfterAll
    static void disconnect() throws Exception {
        broker.close();
    }

    @BeforeEach
    void emptyQueues() {
        broker.purge(QUEUE);
    }

    @Test
    void withoutHibernateTheStoreIsTheDatabaseStoreOnItsOwnTable() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("org.hibernate.Session", false,
                Thread.currentThread().getContextClassLoader()), "no Hibernate in the application");
        assertInstanceOf(DatabaseIdempotencyStore.class, store);
        store.check(); // the table the extension created at startup, with every column of this version
    }

    @Test
    void anOrderDeliveredThreeTimesIsChargedOnceAndItsKeyCommitsWithTheCharge() throws SQLException {
        broker.publish(QUEUE, "m-j1", RabbitQueues.payment("J-1", ""));
        broker.publish(QUEUE, "m-j1", RabbitQueues.payment("J-1", ""));
        broker.publish(QUEUE, "m-j1", RabbitQueues.payment("J-1", ""));
        // one consumer, in order: once the next order is charged, the three deliveries of J-1 were handled
        broker.publish(QUEUE, "m-j2", RabbitQueues.payment("J-2", ""));
        await().atMost(WAIT).until(() -> charges("J-2") == 1);
        assertEquals(1, charges("J-1"));
        assertEquals(1, payments.attempts("J-1"), "the duplicates were acked without running the method");
        assertEquals("CONFIRMED", text("SELECT state FROM idempotency_record WHERE scoped_key = ?", key("m-j1")));
        // written in the method's transaction: the charge's row and the key's row were committed by one transaction
        assertEquals(text("SELECT xmin::text FROM jdbc_charge WHERE order_id = ?", "J-1"),
                text("SELECT xmin::text FROM idempotency_record WHERE scoped_key = ?", key("m-j1")));
    }

    @Test
    void aFailedAttemptRollsBackItsChargeAndTheRetryChargesOnce() {
        broker.publish(QUEUE, "m-j3", RabbitQueues.payment("J-3", "\"failures\": 1"));
        await().atMost(WAIT).until(() -> "CONFIRMED"
                .equals(text("SELECT state FROM idempotency_record WHERE scoped_key = ?", key("m-j3"))));
        assertEquals(2, payments.attempts("J-3"));
        assertEquals(1, charges("J-3"), "the failed attempt's insert was rolled back with it");
    }

    @Test
    void aChargeThatKeepsFailingIsDeadLetteredWithinItsBudgetAndChargesNothing() {
        broker.publish(QUEUE, "m-j4", RabbitQueues.payment("J-4", "\"failures\": 10"));
        await().atMost(WAIT).until(() -> "DEAD_LETTERED"
                .equals(text("SELECT state FROM idempotency_record WHERE scoped_key = ?", key("m-j4"))));
        assertEquals(3, payments.attempts("J-4"), "max-attempts=3");
        assertEquals(0, charges("J-4"));
        await().atMost(WAIT).untilAsserted(() -> assertNotNull(broker.nextDeadLetter(QUEUE)));
    }

    /** The key of a message under the channel's scope (the default key is the message id). */
    private static String key(String messageId) {
        return QUEUE + ":" + messageId;
    }

    private static long charges(String orderId) {
        return Long.parseLong(text("SELECT count(*)::text FROM jdbc_charge WHERE order_id = ?", orderId));
    }

    private static String text(String sql, String parameter) {
        try (Connection c = JdbcServices.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
