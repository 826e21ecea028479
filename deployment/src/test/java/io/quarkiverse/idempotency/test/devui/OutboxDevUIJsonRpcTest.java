package io.quarkiverse.idempotency.test.devui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.arc.Unremovable;
import io.quarkus.devui.tests.DevUIJsonRPCTest;
import io.quarkus.test.QuarkusDevModeTest;

/**
 * The Dev UI's outbox page, through its JSON-RPC methods in a dev-mode application on the real PostgreSQL: the
 * waiting messages with their failures, and "send now" for one waiting for its retry.
 */
class OutboxDevUIJsonRpcTest extends DevUIJsonRPCTest {

    @RegisterExtension
    static final QuarkusDevModeTest APP = new QuarkusDevModeTest()
            .withApplicationRoot(jar -> jar.addClasses(Sender.class).addAsResource(new StringAsset(String.join("\n",
                    "quarkus.devservices.enabled=false",
                    "quarkus.idempotency.store=database",
                    "quarkus.idempotency.purge.every=off",
                    // the relay runs only when asked: the page's "send now"
                    "quarkus.idempotency.outbox.relay-every=off",
                    "quarkus.datasource.db-kind=postgresql",
                    "quarkus.datasource.username=" + TestApps.jdbcUser(),
                    "quarkus.datasource.password=" + TestApps.jdbcPassword(),
                    "quarkus.datasource.jdbc.url=" + TestApps.jdbcUrl(),
                    "quarkus.hibernate-orm.schema-management.strategy=drop-and-create",
                    "mp.messaging.outgoing.receipts.connector=smallrye-in-memory")), "application.properties"));

    OutboxDevUIJsonRpcTest() {
        super("quarkus-idempotency");
    }

    @Test
    void showsWaitingMessagesWithTheirFailuresAndSendsThemOnDemand() throws Exception {
        executeJsonRPCMethod("getOutbox"); // the application is up and its outbox table created
        execute("DELETE FROM idempotency_outbox");
        // refused once, waiting an hour for its retry
        execute("INSERT INTO idempotency_outbox (message_id, channel, message_key, payload_type, payload, lease_owner,"
                + " lease_until, attempts, last_error) VALUES ('receipt-1', 'receipts', 'A-1', 'string', convert_to('A-1',"
                + " 'UTF8'), NULL, now() + interval '1 hour', 1, 'refused by the broker')");

        JsonNode outbox = executeJsonRPCMethod("getOutbox");
        assertEquals(1, outbox.get("waiting").asInt());
        assertEquals(1, outbox.get("failing").asInt());
        assertEquals("receipts", outbox.get("channels").get(0).asText());
        assertEquals("receipt-1", outbox.get("rows").get(0).get("messageId").asText());
        assertEquals("A-1", outbox.get("rows").get(0).get("key").asText());
        assertEquals("refused by the broker", outbox.get("rows").get(0).get("lastError").asText());
        assertEquals("1 message waiting", executeJsonRPCMethod("outboxWaiting").asText(), "the page's label");

        assertEquals(1, executeJsonRPCMethod("sendOutboxNow").get("claimed").asInt(), "sent now, not in an hour");
        outbox = executeJsonRPCMethod("getOutbox");
        assertEquals(0, outbox.get("waiting").asInt(), "confirmed and deleted");
        assertTrue(outbox.get("relayed").asLong() >= 1);
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @ApplicationScoped
    @Unremovable
    public static class Sender {
        @Inject
        @Channel("receipts")
        OutboxEmitter<String> receipts;
    }
}
