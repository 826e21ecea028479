package io.quarkiverse.idempotency.test.schema;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * The database store on a named datasource (here another database of the same server): its table is created, and its
 * keys kept, there, not in the default datasource's database.
 */
class NamedDataSourceTest {

    static final String KEYS_URL = TestServices.postgres().jdbcUrl("root");

    static {
        SchemaSql.beforeStart(NamedDataSourceTest.class, () -> {
            try (Connection c = DriverManager.getConnection(KEYS_URL, TestApps.jdbcUser(), TestApps.jdbcPassword());
                    Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS named_keys");
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
            SchemaSql.run("DROP TABLE IF EXISTS named_ds_payment",
                    "CREATE TABLE named_ds_payment (id VARCHAR(64) PRIMARY KEY)");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "orders", "payments" }, Consumer.class,
            PaymentConsumer.class, SchemaSql.class)
            .overrideConfigKey("quarkus.datasource.keys.db-kind", "postgresql")
            .overrideConfigKey("quarkus.datasource.keys.username", TestApps.jdbcUser())
            .overrideConfigKey("quarkus.datasource.keys.password", TestApps.jdbcPassword())
            .overrideConfigKey("quarkus.datasource.keys.jdbc.url", KEYS_URL)
            .overrideConfigKey("quarkus.idempotency.database.datasource", "keys")
            .overrideConfigKey("quarkus.idempotency.database.table", "named_keys");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Consumer consumer;

    @Inject
    PaymentConsumer payments;

    @Test
    void keysLiveInTheNamedDataSourcesDatabase() throws SQLException {
        deliverTwiceAcked("orders", "n-1");
        assertEquals(1, consumer.runs.get(), "the duplicate was answered from the named datasource's table");
        assertEquals("CONFIRMED", stateInKeysDatabase("orders:n-1"));
    }

    /**
     * A {@code @Transactional} handler whose work goes to the default datasource while the keys live on another: the
     * key cannot share the handler's commit (two non-XA resources in one transaction are refused), so the delivery
     * claims and confirms on the keys' datasource on its own, and the handler's transaction holds only its work.
     */
    @Test
    void aTransactionalHandlerOnTheDefaultDataSourceIsHandledOnceWithKeysElsewhere() throws SQLException {
        deliverTwiceAcked("payments", "p-1");
        assertEquals(1, payments.runs.get(), "handled once, its duplicate answered from the keys' datasource");
        assertEquals("1", new io.quarkiverse.idempotency.test.support.Sql(payments.dataSource)
                .query("SELECT count(*) FROM named_ds_payment"), "the handler's work committed once");
        assertEquals("CONFIRMED", stateInKeysDatabase("payments:p-1"));
    }

    // The same message id delivered twice: both deliveries acked (the second one a duplicate).
    private void deliverTwiceAcked(String channel, String id) {
        for (int i = 0; i < 2; i++) {
            Delivered<String> d = Delivered.withId(id, "x");
            connector.source(channel).send(d.message());
            await().atMost(Duration.ofSeconds(10)).until(d::settled);
            assertEquals(1, d.acks(), "delivery " + (i + 1) + " acked, not nacked: " + d.nacks());
        }
    }

    private static String stateInKeysDatabase(String scopedKey) throws SQLException {
        try (Connection c = DriverManager.getConnection(KEYS_URL, TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT state FROM named_keys WHERE scoped_key = '" + scopedKey + "'")) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    @Singleton
    public static class PaymentConsumer {
        final AtomicInteger runs = new AtomicInteger();

        @Inject
        io.agroal.api.AgroalDataSource dataSource;

        @Incoming("payments")
        @Idempotent
        @jakarta.transaction.Transactional
        void handle(String payload) throws SQLException {
            runs.incrementAndGet();
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO named_ds_payment VALUES ('p-1')");
            }
        }
    }

    @Singleton
    public static class Consumer {
        final AtomicInteger runs = new AtomicInteger();

        @Incoming("orders")
        @Idempotent
        void handle(String payload) {
            runs.incrementAndGet();
        }
    }
}
