package io.quarkiverse.idempotency.test.devui;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.devui.tests.DevUIJsonRPCTest;
import io.quarkus.test.QuarkusDevModeTest;

/**
 * The Dev UI card's data and its purge button, through the Dev UI's JSON-RPC endpoint in a running dev-mode
 * application on the real PostgreSQL: the web component only renders what these methods return.
 */
class DevUIJsonRpcTest extends DevUIJsonRPCTest {

    @RegisterExtension
    static final QuarkusDevModeTest APP = new QuarkusDevModeTest()
            .withApplicationRoot(jar -> jar.addClasses(Consumer.class).addAsResource(new StringAsset(String.join("\n",
                    "quarkus.devservices.enabled=false",
                    "quarkus.idempotency.store=database",
                    // the scheduled purge stays out of the way: this test purges on demand
                    "quarkus.idempotency.purge.every=off",
                    // one table: the test writes an expired key by hand, which no partition of a partitioned one takes
                    "quarkus.idempotency.database.partitioning=none",
                    "quarkus.datasource.db-kind=postgresql",
                    "quarkus.datasource.username=" + TestApps.jdbcUser(),
                    "quarkus.datasource.password=" + TestApps.jdbcPassword(),
                    "quarkus.datasource.jdbc.url=" + TestApps.jdbcUrl(),
                    "quarkus.hibernate-orm.schema-management.strategy=drop-and-create",
                    "mp.messaging.incoming.in.connector=smallrye-in-memory",
                    "mp.messaging.incoming.in.run-on-vertx-context=true")), "application.properties"));

    DevUIJsonRpcTest() {
        super("quarkus-idempotency");
    }

    @Test
    void showsKeysByStateOldestClaimsRecentKeysAndPurgesOnDemand() throws Exception {
        executeJsonRPCMethod("getState"); // the application is up and its schema created
        execute("DELETE FROM idempotency_record");
        execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at) VALUES"
                + " ('in:live', 'in', 'CLAIMED', 'w-1', now() - interval '90 seconds', now() + interval '1 day'),"
                + " ('in:done', 'in', 'CONFIRMED', 'w-1', now(), now() + interval '1 day'),"
                + " ('in:old1', 'in', 'CONFIRMED', 'w-1', now() - interval '2 days', now() - interval '1 day'),"
                + " ('in:old2', 'in', 'CLAIMED', 'w-2', now() - interval '2 days', now() - interval '1 day')");

        JsonNode state = executeJsonRPCMethod("getState");
        assertEquals("DatabaseIdempotencyStore", state.get("store").asText());
        assertEquals(2, state.get("counts").get("CLAIMED").asInt());
        assertEquals(2, state.get("counts").get("CONFIRMED").asInt());
        assertEquals("old2", state.get("oldestClaims").get(0).get("key").asText(), "oldest claim first");
        assertEquals("done", state.get("recent").get(0).get("key").asText(),
                "most recent first, its key as the application made it (the scope has its own column)");
        assertEquals("in", state.get("recent").get(0).get("scope").asText());
        assertTrue(state.get("oldestClaimAgeSeconds").asLong() >= 86_400);
        assertTrue(state.get("lastPurge") == null || state.get("lastPurge").isNull(), "no purge ran yet");

        assertEquals("4 keys", executeJsonRPCMethod("keyCount").asText(), "the card's label");

        JsonNode started = executeJsonRPCMethod("startPurge");
        assertTrue(started.get("started").asBoolean(), "the purge runs in the background");
        awaitPurgeEnd(); // polling, as the page does

        state = executeJsonRPCMethod("getState");
        assertTrue(!state.get("purging").asBoolean(), "the purge finished");
        assertEquals(1, state.get("counts").get("CLAIMED").asInt());
        assertEquals(1, state.get("counts").get("CONFIRMED").asInt());
        assertEquals(2, state.get("lastPurge").get("deleted").asInt());
        assertTrue(state.get("purgeFailure") == null || state.get("purgeFailure").isNull(), "nothing failed");

        // A purge that fails says why, rather than showing the previous run's figures as its own.
        execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at) VALUES"
                + " ('in:old3', 'in', 'CONFIRMED', 'w-1', now() - interval '2 days', now() - interval '1 day')");
        execute("CREATE OR REPLACE FUNCTION idempotency_devui_refuse() RETURNS trigger AS"
                + " $$ BEGIN RAISE EXCEPTION 'deletes refused for this test'; END $$ LANGUAGE plpgsql");
        execute("CREATE TRIGGER idempotency_devui_refuse BEFORE DELETE ON idempotency_record"
                + " FOR EACH ROW EXECUTE FUNCTION idempotency_devui_refuse()");
        try {
            assertTrue(executeJsonRPCMethod("startPurge").get("started").asBoolean());
            awaitPurgeEnd();
            state = executeJsonRPCMethod("getState");
            assertTrue(state.get("purgeFailure").asText().contains("deletes refused for this test"),
                    state.get("purgeFailure").toString());
        } finally {
            execute("DROP TRIGGER idempotency_devui_refuse ON idempotency_record");
            execute("DROP FUNCTION idempotency_devui_refuse()");
        }
    }

    private void awaitPurgeEnd() {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> !executeJsonRPCMethod("getState").get("purging").asBoolean());
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @ApplicationScoped
    public static class Consumer {
        @Incoming("in")
        @Idempotent
        void handle(String payload) {
        }
    }
}
