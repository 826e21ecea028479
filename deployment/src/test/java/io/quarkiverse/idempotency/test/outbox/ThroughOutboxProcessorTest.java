package io.quarkiverse.idempotency.test.outbox;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import jakarta.enterprise.inject.Any;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.MessageIdMetadata;
import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.ThroughOutbox;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;
import io.smallrye.reactive.messaging.memory.InMemorySink;

/**
 * A {@code @ThroughOutbox} processor's output is written to the outbox in its transaction, with its work and its key,
 * and sent from there: once, under an id derived from the incoming key, after the commit; a rollback sends nothing, a duplicate
 * neither,
 * and a {@code null} output is a skip. On a channel that only the processor sends to (the build declares its outbox)
 * and on one whose {@code OutboxEmitter} is injected too.
 */
class ThroughOutboxProcessorTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "orders", "refunds" }, Processors.class,
            Receipt.class, Refunder.class)
            .overrideConfigKey("mp.messaging.outgoing.receipts.connector", "smallrye-in-memory")
            .overrideConfigKey("mp.messaging.outgoing.notices.connector", "smallrye-in-memory")
            .overrideConfigKey("quarkus.idempotency.outbox.relay-every", "1s");

    public record Receipt(String orderId, long amountCents) {
    }

    @Singleton
    public static class Processors {
        final AtomicInteger runs = new AtomicInteger();

        @Inject
        DataSource dataSource;

        @Incoming("orders")
        @Outgoing("receipts")
        @ThroughOutbox
        @Idempotent
        @Transactional
        public Receipt charge(String orderId) throws Exception {
            runs.incrementAndGet();
            new Sql(dataSource).execute("INSERT INTO test_processed VALUES ('" + orderId + "')");
            if (orderId.startsWith("fail")) {
                throw new IllegalStateException("the charge failed after the work was written");
            }
            return orderId.startsWith("skip") ? null : new Receipt(orderId, 1299);
        }

        @Incoming("refunds")
        @Outgoing("notices")
        @ThroughOutbox
        @Idempotent
        @Transactional
        public String refund(String orderId) {
            return "refunded " + orderId;
        }
    }

    /** Sends to the processor's channel through an injected outbox too: one emitter for both. */
    @Singleton
    public static class Refunder {

        @Inject
        @Channel("notices")
        OutboxEmitter<String> notices;
    }

    @Inject
    Processors processors;

    @Inject
    Refunder refunder;

    @Inject
    @Any
    InMemoryConnector connector;

    @Inject
    DataSource dataSource;

    @Inject
    Outbox outbox;

    InMemorySink<Receipt> receipts;
    InMemorySink<String> notices;
    Sql sql;

    @BeforeEach
    void clear() throws Exception {
        receipts = connector.sink("receipts");
        receipts.clear();
        notices = connector.sink("notices");
        notices.clear();
        sql = new Sql(dataSource);
        sql.execute("CREATE TABLE IF NOT EXISTS test_processed (order_id text)");
        sql.execute("DELETE FROM test_processed");
        sql.execute("DELETE FROM idempotency_outbox");
        processors.runs.set(0);
    }

    @Test
    void theOutputIsSentOnceAfterTheCommitUnderTheIdOfItsKeyAndADuplicateSendsNothing() throws Exception {
        Delivered<String> first = send("orders", "m-1", "A-1");
        assertEquals(1, first.acks());
        await().atMost(Duration.ofSeconds(10)).until(() -> receipts.received().size() == 1 && rows() == 0);
        Message<Receipt> receipt = receipts.received().get(0);
        assertEquals(new Receipt("A-1", 1299), receipt.getPayload());
        assertEquals(Outbox.outputId(new ScopedKey("orders", "m-1"), "receipts"),
                receipt.getMetadata(MessageIdMetadata.class).orElseThrow().id(),
                "the id of its row, derived from the key of the order's message");

        assertEquals(1, send("orders", "m-1", "A-1").acks(), "the duplicate is acked");
        awaitARelayRun();
        assertEquals(1, receipts.received().size(), "and sends nothing");
        assertEquals(1, processors.runs.get());
        assertEquals("1", sql.query("SELECT count(*)::text FROM test_processed"));
    }

    @Test
    void aRolledBackAttemptSendsNothing() throws Exception {
        Delivered<String> failed = send("orders", "m-2", "fail-B");
        assertEquals(0, failed.acks());
        assertInstanceOf(HandlerFailedException.class, failed.nacks().get(0));
        awaitARelayRun();
        assertEquals(List.of(), receipts.received(), "the output rolled back with the work");
        assertEquals("0", sql.query("SELECT count(*)::text FROM test_processed"));
        assertEquals(0, rows());
    }

    @Test
    void aNullOutputIsASkipThatSendsNothing() throws Exception {
        assertEquals(1, send("orders", "m-3", "skip-C").acks());
        awaitARelayRun();
        assertEquals(List.of(), receipts.received());
        assertEquals("1", sql.query("SELECT count(*)::text FROM test_processed"), "its work committed");
    }

    @Test
    void aChannelWithAnInjectedOutboxTakesTheProcessorsOutputAndTheEmittersSends() throws Exception {
        assertEquals(1, send("refunds", "r-1", "D-1").acks());
        QuarkusTransaction.requiringNew().run(() -> refunder.notices.send("sent by hand"));
        await().atMost(Duration.ofSeconds(10)).until(() -> notices.received().size() == 2 && rows() == 0);
        assertEquals(List.of("refunded D-1", "sent by hand"),
                notices.received().stream().map(Message::getPayload).sorted().toList());
    }

    private Delivered<String> send(String channel, String id, String orderId) {
        Delivered<String> d = Delivered.withId(id, orderId);
        connector.source(channel).send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    // Returns once a relay run that started after this call has ended: whatever was left to send is sent.
    private void awaitARelayRun() {
        long started = outbox.counts().relayRunsStarted();
        await().atMost(Duration.ofSeconds(10)).until(() -> outbox.counts().relayRunsEnded() > started);
    }

    private long rows() throws Exception {
        return Long.parseLong(sql.query("SELECT count(*) FROM idempotency_outbox"));
    }
}
