package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A lease-mode {@code @Transactional} handler that catches an SQL error of its own and returns: its transaction can no
 * longer run a statement, so the key's confirm in it fails. That is the handler's failure, counted against the budget
 * and in the end dead-lettered, not a store outage requeued for ever without being counted. In the default mode the
 * key, written in that transaction, is lost with it: the message is not acked, and the attempt counts.
 */
class SwallowedSqlErrorTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "charges", "refunds" }, Handler.class,
            Charge.class)
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0")
            .overrideConfigKey("quarkus.idempotency.retry.max-attempts", "2");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    AgroalDataSource dataSource;

    @BeforeEach
    void clean() throws SQLException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
    }

    @Test
    void aTransactionTheHandlerBrokeIsAFailedAttempt() throws SQLException {
        HandlerFailedException first = assertInstanceOf(HandlerFailedException.class, send("s-1").nacks().get(0),
                "the handler's failure, counted");
        assertEquals(1, first.attempt());
        assertInstanceOf(AttemptsExhaustedException.class, send("s-1").nacks().get(0), "then dead-lettered");
        assertEquals("DEAD_LETTERED 2", new Sql(dataSource).query("SELECT state || ' ' || attempts FROM"
                + " idempotency_record WHERE scoped_key = 'charges:s-1'"));
    }

    /**
     * In the default mode the key is written in the broken transaction too: its commit comes back as a rollback
     * (PostgreSQL answers COMMIT with ROLLBACK, which the driver raises), so nothing is acked and the attempt counts.
     */
    @Test
    void aTransactionTheHandlerBrokeInTheDefaultModeIsAFailedAttemptNeverAcked() throws SQLException {
        Delivered<String> first = send("refunds", "r-1");
        assertEquals(0, first.acks(), "not acked: neither the work nor the key committed");
        assertEquals(1, assertInstanceOf(HandlerFailedException.class, first.nacks().get(0)).attempt());
        assertInstanceOf(AttemptsExhaustedException.class, send("refunds", "r-1").nacks().get(0), "then dead-lettered");
        assertEquals("DEAD_LETTERED 2", new Sql(dataSource).query("SELECT state || ' ' || attempts FROM"
                + " idempotency_record WHERE scoped_key = 'refunds:r-1'"));
    }

    private Delivered<String> send(String id) {
        return send("charges", id);
    }

    private Delivered<String> send(String channel, String id) {
        Delivered<String> d = Delivered.withId(id, id);
        connector.source(channel).send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    @Singleton
    public static class Handler {

        @Inject
        AgroalDataSource dataSource;

        @Incoming("charges")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Blocking
        @Transactional
        void charge(String orderId) {
            divideByZero();
        }

        private void divideByZero() {
            // plain JDBC on the transaction's connection: nothing marks the JTA transaction rollback-only
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute("SELECT 1 / 0");
            } catch (SQLException e) {
                // swallowed: PostgreSQL has aborted the transaction all the same
            }
        }

        @Incoming("refunds")
        @Idempotent
        @Transactional
        void refund(String orderId) {
            divideByZero();
        }
    }
}
