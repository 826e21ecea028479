package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.StoreUnavailableException;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A {@code @Transactional} handler whose work is on another datasource than the keys: its transaction cannot take
 * both (two non-XA resources), so the key cannot be written in it. The first delivery finds out (the transaction
 * manager refuses the second datasource), is not counted against its budget, and from then on the method's keys are
 * claimed and confirmed apart, on a lease: every message is handled once, none dead-lettered, and the reason is logged
 * once, with the remedy.
 */
class HandlerOnAnotherDataSourceTest {

    static final String WORK_URL = TestServices.postgres().jdbcUrl("root");

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "orders" }, Handler.class)
            .overrideConfigKey("quarkus.datasource.work.db-kind", "postgresql")
            .overrideConfigKey("quarkus.datasource.work.username", TestApps.jdbcUser())
            .overrideConfigKey("quarkus.datasource.work.password", TestApps.jdbcPassword())
            .overrideConfigKey("quarkus.datasource.work.jdbc.url", WORK_URL)
            .setLogRecordPredicate(r -> r.getLoggerName().startsWith("io.quarkiverse.idempotency"))
            .assertLogRecords(records -> assertEquals(1, records.stream()
                    .filter(r -> r.getMessage() != null && r.getMessage().contains("on another datasource than the"
                            + " idempotency keys"))
                    .count(), "said once, with the remedy"));

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Handler handler;

    @Inject
    AgroalDataSource keys;

    @BeforeAll
    static void table() throws SQLException {
        try (Connection c = DriverManager.getConnection(WORK_URL, TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS other_ds_order");
            s.execute("CREATE TABLE other_ds_order (id VARCHAR(64) PRIMARY KEY)");
        }
    }

    @Test
    void theKeysAreKeptApartFromTheHandlersTransactionAndEveryMessageIsHandledOnce() throws SQLException {
        Delivered<String> first = send("o-1");
        assertInstanceOf(StoreUnavailableException.class, first.nacks().get(0),
                "the first delivery finds out: come back soon, not counted");
        for (String id : new String[] { "o-1", "o-1", "o-2", "o-2" }) {
            assertEquals(1, send(id).acks(), id + " acked");
        }
        assertEquals(2, handler.committed.get(), "each order handled once");
        assertEquals("2", rows());
        Sql sql = new Sql(keys);
        assertEquals("CONFIRMED 0", sql.query("SELECT state || ' ' || attempts FROM idempotency_record"
                + " WHERE scoped_key = 'orders:o-1'"), "its key confirmed apart, no attempt counted");
        assertTrue(handler.runs.get() >= 3, "the first delivery ran into the refusal");
    }

    private Delivered<String> send(String id) {
        Delivered<String> d = Delivered.withId(id, id);
        connector.source("orders").send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    private static String rows() throws SQLException {
        try (Connection c = DriverManager.getConnection(WORK_URL, TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement();
                var rs = s.executeQuery("SELECT count(*)::text FROM other_ds_order")) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Singleton
    public static class Handler {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger committed = new AtomicInteger();

        @Inject
        @io.quarkus.agroal.DataSource("work")
        AgroalDataSource work;

        @Incoming("orders")
        @Idempotent
        @Transactional
        void handle(String id) throws SQLException {
            runs.incrementAndGet();
            try (Connection c = work.getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO other_ds_order VALUES ('" + id + "')");
            }
            committed.incrementAndGet();
        }
    }
}
