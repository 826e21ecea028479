package io.quarkiverse.idempotency.test.outbox;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import jakarta.enterprise.inject.Any;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.MessageIdMetadata;
import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;
import io.smallrye.reactive.messaging.memory.InMemorySink;

/**
 * The outbox on the real PostgreSQL, sending to an in-memory channel: a committed send arrives once with its id and
 * leaves no row; a rolled-back one sends nothing; one outside a transaction is refused; an object payload is stored
 * as JSON and relayed as its class; rows are relayed in the order they were written.
 */
class OutboxInMemoryChannelTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], Sender.class, Receipt.class)
            .overrideConfigKey("mp.messaging.outgoing.receipts.connector", "smallrye-in-memory")
            .overrideConfigKey("quarkus.idempotency.outbox.relay-every", "1s");

    public record Receipt(String orderId, long amountCents) {
    }

    @Singleton
    public static class Sender {

        @Inject
        @Channel("receipts")
        OutboxEmitter<Receipt> receipts;
    }

    @Inject
    Sender sender;

    @Inject
    @Any
    InMemoryConnector connector;

    @Inject
    DataSource dataSource;

    @Inject
    Outbox outbox;

    InMemorySink<Receipt> sink;
    Sql sql;

    @BeforeEach
    void clear() throws Exception {
        sink = connector.sink("receipts");
        sink.clear();
        sql = new Sql(dataSource);
        sql.execute("DELETE FROM idempotency_outbox");
    }

    @Test
    void aCommittedSendArrivesOnceWithItsIdAndLeavesNoRow() {
        String id = QuarkusTransaction.requiringNew().call(() -> sender.receipts.send(new Receipt("A-1", 1299)));
        await().atMost(Duration.ofSeconds(10)).until(() -> sink.received().size() == 1 && rows() == 0);
        Message<Receipt> message = sink.received().get(0);
        assertEquals(new Receipt("A-1", 1299), message.getPayload());
        assertEquals(id, message.getMetadata(MessageIdMetadata.class).orElseThrow().id());
    }

    @Test
    void aRolledBackSendSendsNothingAndOneOutsideATransactionIsRefused() throws Exception {
        assertThrows(IllegalStateException.class, () -> QuarkusTransaction.requiringNew().run(() -> {
            sender.receipts.send(new Receipt("B-1", 1));
            throw new IllegalStateException("rolled back");
        }));
        assertThrows(IllegalStateException.class, () -> sender.receipts.send(new Receipt("B-2", 1)));
        awaitARelayRunFromNow();
        assertEquals(List.of(), sink.received());
        assertEquals(0, rows());
    }

    /**
     * A transaction committed asynchronously: its messages are sent once the WAL is flushed past it, and only those whose
     * rows are still there then. A crash of the server can lose such a commit after it returned, and the flush that
     * follows, on the restarted server, succeeds: a message sent from memory would announce work that is gone (and that
     * its redelivery does again, with a message of its own). The lost row stands here for such a commit: deleted in the
     * transaction that wrote it.
     */
    @Test
    void afterAnAsynchronousCommitOnlyTheMessagesWhoseRowsAreThereAreSent() throws Exception {
        // the WAL writer asleep: only a flush of the outbox's own writes the commit out before the message leaves
        sql.execute("ALTER SYSTEM SET wal_writer_delay = '10s'");
        sql.query("SELECT pg_reload_conf()::text");
        try {
            String lost = QuarkusTransaction.requiringNew().call(() -> {
                sql.execute("SET LOCAL synchronous_commit = off");
                sender.receipts.send(new Receipt("K-1", 1));
                String id = sender.receipts.send(new Receipt("K-2", 2));
                sql.execute("DELETE FROM idempotency_outbox WHERE message_id = '" + id + "'");
                return id;
            });
            String committed = sql.query("SELECT pg_current_wal_insert_lsn()::text");
            await().atMost(Duration.ofSeconds(10)).until(() -> sink.received().size() == 1);
            assertEquals("true", sql.query("SELECT (pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '" + committed
                    + "') >= 0)::text"), "sent once the WAL was flushed past its commit");
            await().atMost(Duration.ofSeconds(10)).until(() -> rows() == 0);
            awaitARelayRunFromNow();
            assertEquals(List.of(new Receipt("K-1", 1)), sink.received().stream().map(Message::getPayload).toList(),
                    "the message whose row is gone (" + lost + ") is not sent");
        } finally {
            sql.execute("ALTER SYSTEM RESET wal_writer_delay");
            sql.query("SELECT pg_reload_conf()::text");
        }
    }

    /**
     * After a crash of the server, the sequence may hand a lost row's id out again, and a message id the sender gave is
     * the same in its redelivery's row: a row with the id and the message id of the one written, but written later, is
     * not that row, and its message is not sent for it (it may say something else). The later row stands here as the
     * written one changed in its own transaction: another payload, a lease set later.
     */
    @Test
    void afterAnAsynchronousCommitARowThatTookTheIdsOfTheOneWrittenIsNotSentInItsPlace() throws Exception {
        long handled = outbox.counts().afterCommitsHandled();
        QuarkusTransaction.requiringNew().run(() -> {
            try {
                sql.execute("SET LOCAL synchronous_commit = off");
                sender.receipts.send(new Receipt("N-1", 1), "fixed-n");
                sql.execute("UPDATE idempotency_outbox SET lease_until = lease_until + interval '1 hour', payload ="
                        + " convert_to('{\"orderId\":\"N-2\",\"amountCents\":2}', 'UTF8') WHERE message_id = 'fixed-n'");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> outbox.counts().afterCommitsHandled() > handled); // its fast path
        awaitARelayRunFromNow();
        assertEquals(List.of(), sink.received(), "neither the message written nor the row's");
        assertEquals(1, rows(), "the later row waits for its own lease");
    }

    @Test
    void leftRowsAreRelayedAsTheirClassInTheOrderTheyWereWritten() throws Exception {
        for (int i = 0; i < 5; i++) {
            sql.execute("INSERT INTO idempotency_outbox (message_id, channel, payload_type, payload, lease_owner,"
                    + " lease_until) VALUES ('left-" + i + "', 'receipts', '" + Receipt.class.getName()
                    + "', convert_to('{\"orderId\":\"L-" + i + "\",\"amountCents\":" + i
                    + "}', 'UTF8'), 'gone', now() - interval '1 second')");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> sink.received().size() == 5 && rows() == 0);
        for (int i = 0; i < 5; i++) {
            Message<Receipt> message = sink.received().get(i);
            assertInstanceOf(Receipt.class, message.getPayload());
            assertEquals(new Receipt("L-" + i, i), message.getPayload());
            assertEquals("left-" + i, message.getMetadata(MessageIdMetadata.class).orElseThrow().id());
        }
    }

    @Test
    void rowsOfAnotherApplicationsChannelAreLeftToIt() throws Exception {
        // a table shared with another application: its rows are not this relay's to claim (and fail)
        sql.execute("INSERT INTO idempotency_outbox (message_id, channel, payload_type, payload, lease_owner,"
                + " lease_until) VALUES ('theirs', 'their-channel', 'string', convert_to('x', 'UTF8'), NULL,"
                + " now() - interval '1 second')");
        sql.execute("INSERT INTO idempotency_outbox (message_id, channel, payload_type, payload, lease_owner,"
                + " lease_until) VALUES ('ours', 'receipts', '" + Receipt.class.getName() + "', convert_to("
                + "'{\"orderId\":\"O-1\",\"amountCents\":1}', 'UTF8'), NULL, now() - interval '1 second')");
        await().atMost(Duration.ofSeconds(10)).until(() -> sink.received().size() == 1 && rows() == 1);
        awaitARelayRunFromNow();
        assertEquals("theirs|0|", sql.query("SELECT message_id || '|' || attempts || '|' || coalesce(last_error, '')"
                + " FROM idempotency_outbox"), "untouched: not claimed, not failed");
    }

    // Returns once a run of the relay job that started after this call has ended: whatever it could send, it sent.
    private void awaitARelayRunFromNow() {
        long started = outbox.counts().relayRunsStarted();
        await().atMost(Duration.ofSeconds(10)).until(() -> outbox.counts().relayRunsEnded() > started);
    }

    private long rows() throws Exception {
        return Long.parseLong(sql.query("SELECT count(*) FROM idempotency_outbox"));
    }
}
