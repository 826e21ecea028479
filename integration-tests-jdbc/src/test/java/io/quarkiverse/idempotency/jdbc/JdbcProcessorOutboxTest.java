package io.quarkiverse.idempotency.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkus.test.QuarkusUnitTest;
import io.vertx.core.json.JsonObject;

/**
 * A {@code @ThroughOutbox @Idempotent @Transactional} processor on the real RabbitMQ and PostgreSQL (plain JDBC): its
 * output is written in its transaction with its work and its key, and sent to the exchange once that transaction
 * committed, at once, under an id derived from the refund's key; one notice per refunded order whatever the duplicates, none
 * for an
 * attempt that rolled back. The channel has no {@code OutboxEmitter} injected: the build declares its outbox.
 */
class JdbcProcessorOutboxTest {

    private static final String REFUNDS = "jdbc-refunds";
    private static final String NOTICES = "refund-notices";

    @RegisterExtension
    static final QuarkusUnitTest APP = JdbcServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(JdbcRefunds.class,
                    JdbcServices.class)))
            // the relay would send a row only after its lease: a notice within seconds was sent at the commit
            .overrideConfigKey("quarkus.idempotency.outbox.relay-every", "off");

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static RabbitQueues broker;

    @Inject
    JdbcRefunds refunds;

    @Inject
    Outbox outbox;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-jdbc-processor-it");
        broker.bind(NOTICES, NOTICES);
        broker.purge(REFUNDS);
    }

    @AfterAll
    static void disconnect() throws Exception {
        broker.close();
    }

    @Test
    void eachRefundedOrderSendsOneNoticeAtItsCommitUnderAnIdOfItsOwn() throws Exception {
        long sentBefore = outbox.counts().sentAtOnce();
        long relayedBefore = outbox.counts().relayed();
        int orders = 20;
        for (int i = 0; i < orders; i++) {
            broker.publish(REFUNDS, "m-RF-" + i, RabbitQueues.payment("RF-" + i, ""));
            broker.publish(REFUNDS, "m-RF-" + i, RabbitQueues.payment("RF-" + i, "")); // a duplicate: no second notice
        }
        // its first attempt refunds, then fails: rolled back, notice and all
        broker.publish(REFUNDS, "m-RF-failing", RabbitQueues.payment("RF-failing", "\"failures\": 1"));

        Map<String, JsonObject> notices = new HashMap<>();
        Set<String> ids = new HashSet<>();
        await().atMost(WAIT).until(() -> {
            for (GetResponse r = broker.next(NOTICES); r != null; r = broker.next(NOTICES)) {
                JsonObject notice = new JsonObject(new String(r.getBody(), StandardCharsets.UTF_8));
                String id = r.getProps().getMessageId();
                assertTrue(id != null && ids.add(id), "each notice has an id of its own: " + id);
                assertNull(notices.put(notice.getString("orderId"), notice), "one notice per order: " + notice);
                assertEquals(Outbox.outputId(new ScopedKey(REFUNDS, "m-" + notice.getString("orderId")), NOTICES), id,
                        "the id derived from its refund's key (its message id)");
            }
            return notices.size() == orders + 1;
        });
        for (int i = 0; i < orders; i++) {
            assertEquals(1, refunds.attempts("RF-" + i), "the duplicate did not run the method");
            assertEquals(1, rows("SELECT count(*) FROM jdbc_refund WHERE order_id = 'RF-" + i + "'"));
        }
        assertEquals(2, notices.get("RF-failing").getInteger("attempt"), "the notice of the attempt that committed");
        assertEquals(1, rows("SELECT count(*) FROM jdbc_refund WHERE order_id = 'RF-failing'"));
        // counted as the broker confirms them
        await().atMost(WAIT).until(() -> outbox.counts().sentAtOnce() - sentBefore >= orders + 1);
        assertEquals(orders + 1, outbox.counts().sentAtOnce() - sentBefore, "each sent once, at its commit");
        assertEquals(relayedBefore, outbox.counts().relayed(), "none by the relay");
        await().atMost(WAIT).until(() -> rows("SELECT count(*) FROM idempotency_outbox") == 0);
        // nothing more arrives for a second: each message got its notice and no second one
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> broker.next(NOTICES) == null);
        // every key confirmed, the failed attempt's included
        assertEquals(0, rows("SELECT count(*) FROM idempotency_record WHERE scoped_key LIKE 'jdbc-refunds:%'"
                + " AND state <> 'CONFIRMED'"));
    }

    private static long rows(String sql) throws SQLException {
        try (Connection c = JdbcServices.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
