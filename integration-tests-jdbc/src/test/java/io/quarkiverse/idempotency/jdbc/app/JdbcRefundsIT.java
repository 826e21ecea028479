package io.quarkiverse.idempotency.jdbc.app;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.vertx.core.json.JsonObject;

/**
 * The packaged application's {@code @ThroughOutbox} processor (the native executable in native mode), in production
 * mode on the real RabbitMQ and PostgreSQL: each refund's notice, written to the outbox in the refund's transaction,
 * reaches the exchange once per refunded order, whatever the duplicates, under an id of its own; an attempt that rolled
 * back sent none, and no row is left behind.
 */
@QuarkusIntegrationTest
@WithTestResource(Servers.class)
class JdbcRefundsIT {

    private static final String REFUNDS = "jdbc-refunds";
    private static final String NOTICES = "refund-notices";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static RabbitQueues broker;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-jdbc-refunds-packaged");
        broker.bind(NOTICES, NOTICES);
        broker.purge(REFUNDS);
    }

    @AfterAll
    static void disconnect() throws Exception {
        broker.close();
    }

    @Test
    void eachRefundedOrderSendsOneNoticeUnderAnIdOfItsOwn() throws Exception {
        int orders = 10;
        for (int i = 0; i < orders; i++) {
            broker.publish(REFUNDS, "m-pr" + i, RabbitQueues.payment("PR-" + i, ""));
            broker.publish(REFUNDS, "m-pr" + i, RabbitQueues.payment("PR-" + i, "")); // a duplicate: no second notice
        }
        broker.publish(REFUNDS, "m-pr-failing", RabbitQueues.payment("PR-failing", "\"failures\": 1"));

        Map<String, JsonObject> notices = new HashMap<>();
        Set<String> ids = new HashSet<>();
        await().atMost(WAIT).until(() -> {
            for (GetResponse r = broker.next(NOTICES); r != null; r = broker.next(NOTICES)) {
                JsonObject notice = new JsonObject(new String(r.getBody(), StandardCharsets.UTF_8));
                String id = r.getProps().getMessageId();
                assertTrue(id != null && ids.add(id), "each notice has an id of its own: " + id);
                assertNull(notices.put(notice.getString("orderId"), notice), "one notice per order: " + notice);
            }
            return notices.size() == orders + 1;
        });
        for (int i = 0; i < orders; i++) {
            assertEquals(1, rows("SELECT count(*) FROM jdbc_refund WHERE order_id = 'PR-" + i + "'"));
        }
        assertEquals(2, notices.get("PR-failing").getInteger("attempt"), "the notice of the attempt that committed");
        assertEquals(1, rows("SELECT count(*) FROM jdbc_refund WHERE order_id = 'PR-failing'"));
        await().atMost(WAIT).until(() -> rows("SELECT count(*) FROM idempotency_outbox") == 0);
        // nothing more arrives for a second: each message got its notice and no second one
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> broker.next(NOTICES) == null);
    }

    private static long rows(String sql) throws SQLException {
        TestServices.Server db = TestServices.postgres();
        try (Connection c = DriverManager.getConnection(db.jdbcUrl(Servers.DATABASE), db.user(), db.password());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
