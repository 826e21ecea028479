package io.quarkiverse.idempotency.test.outbox;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import jakarta.enterprise.inject.Any;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkiverse.idempotency.test.outbox.OutboxInMemoryChannelTest.Receipt;
import io.quarkiverse.idempotency.test.outbox.OutboxInMemoryChannelTest.Sender;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;
import io.smallrye.reactive.messaging.memory.InMemorySink;

/**
 * After an asynchronous commit, the outbox sends a transaction's messages once a flush has made it durable. When that
 * flush fails (the database server crashed, or cannot be reached), the rows stay leased to their writer; the relay
 * takes them at its next run, not once their lease has run out (60 s here): after a crash of PostgreSQL, the messages
 * of the commits it kept leave as soon as it is back.
 */
class OutboxGivenUpRowsTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], Sender.class, Receipt.class)
            .overrideConfigKey("mp.messaging.outgoing.receipts.connector", "smallrye-in-memory")
            .overrideConfigKey("quarkus.idempotency.outbox.relay-every", "1s")
            .overrideConfigKey("quarkus.idempotency.outbox.lease", "60s")
            // one pooled connection: the flush after the commit runs on the connection the sender committed on
            .overrideConfigKey("quarkus.datasource.jdbc.max-size", "1")
            .overrideConfigKey("quarkus.datasource.jdbc.acquisition-timeout", "20s")
            .overrideConfigKey("quarkus.idempotency.purge.enabled", "false");

    @Inject
    Sender sender;

    @Inject
    @Any
    InMemoryConnector connector;

    @Inject
    DataSource dataSource;

    @Inject
    Outbox outbox;

    @Test
    void rowsWhoseFlushFailedAreRelayedAtTheNextRunNotAfterTheirLease() throws Exception {
        InMemorySink<Receipt> sink = connector.sink("receipts");
        Sql sql = new Sql(dataSource);
        sql.execute("CREATE SCHEMA IF NOT EXISTS flush_fault");
        sql.execute("CREATE OR REPLACE FUNCTION flush_fault.pg_logical_emit_message(boolean, text, text) RETURNS"
                + " pg_lsn LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION 'the flush fails by construction'; END $f$");
        long sentAtOnce = outbox.counts().sentAtOnce();
        long relayed = outbox.counts().relayed();
        try {
            QuarkusTransaction.requiringNew().run(() -> {
                try {
                    sql.execute("SET LOCAL synchronous_commit = off");
                    // the session's search path finds the failing pg_logical_emit_message first: the outbox's flush
                    // after this commit, on the one pooled connection, fails
                    sql.execute("SET search_path TO flush_fault, pg_catalog, public");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                sender.receipts.send(new Receipt("G-1", 1));
                sender.receipts.send(new Receipt("G-2", 2));
            });
            await().atMost(Duration.ofSeconds(15)).until(() -> sink.received().size() == 2);
        } finally {
            sql.execute("RESET search_path");
            sql.execute("DROP SCHEMA flush_fault CASCADE");
        }
        assertEquals(List.of(new Receipt("G-1", 1), new Receipt("G-2", 2)),
                sink.received().stream().map(Message::getPayload).toList(), "in the order they were written");
        assertEquals(sentAtOnce, outbox.counts().sentAtOnce(), "not sent at once: the flush failed");
        assertEquals(relayed + 2, outbox.counts().relayed(), "by the relay, well before their lease ran out");
        await().atMost(Duration.ofSeconds(10)).until(() -> "0".equals(sql.query("SELECT count(*)::text FROM"
                + " idempotency_outbox")));
    }
}
