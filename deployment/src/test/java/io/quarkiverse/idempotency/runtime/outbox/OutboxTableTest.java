package io.quarkiverse.idempotency.runtime.outbox;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import io.quarkiverse.idempotency.runtime.database.KeyTable;
import io.quarkiverse.idempotency.testing.TestServices;

/**
 * The outbox table's claims and fences on the real PostgreSQL, as several senders (instances, or a fast path and a
 * relay of one instance) meet on it: a relay claims no row written after one still leased to a sender, so a
 * transaction's messages leave in order whoever sends them; two relays claim one after the other; a lease renewed
 * while its sending waits keeps the row from every other sender; a sender whose lease was taken over changes nothing.
 */
class OutboxTableTest {

    static final String TABLE = "outbox_table_test";
    static final Set<String> CHANNELS = Set.of("receipts");
    static final Duration LEASE = Duration.ofSeconds(30);

    PGSimpleDataSource dataSource;
    OutboxTable table;

    @BeforeEach
    void createTable() throws SQLException {
        TestServices.Server db = TestServices.postgres();
        dataSource = new PGSimpleDataSource();
        dataSource.setUrl(db.jdbcUrl("postgres"));
        dataSource.setUser(db.user());
        dataSource.setPassword(db.password());
        execute("DROP TABLE IF EXISTS " + TABLE);
        table = new OutboxTable(new KeyTable(dataSource, com.arjuna.ats.jta.TransactionManager.transactionManager(),
                TABLE));
        table.create();
    }

    @AfterEach
    void dropTable() throws SQLException {
        execute("DROP TABLE IF EXISTS " + TABLE);
    }

    @Test
    void aRelayClaimsNoRowWrittenAfterOneStillLeasedToASender() throws Exception {
        long otherApplications = insert("audit", "other-app", "now() + interval '1 minute'");
        long inFlight = insert("receipts", "instance-b", "now() + interval '1 minute'");
        long second = insert("receipts", "instance-b", "now() - interval '1 second'");
        long third = insert("receipts", "instance-b", "now() - interval '1 second'");

        assertEquals(List.of(), ids(table.claimDue("instance-a", LEASE, 10, CHANNELS, Map.of())),
                "the rows after a row whose sending another sender awaits wait for it: sent now, they would leave"
                        + " before it");

        execute("UPDATE " + TABLE + " SET lease_until = now() - interval '1 second' WHERE id = " + inFlight);
        assertEquals(List.of(inFlight, second, third),
                ids(table.claimDue("instance-a", LEASE, 10, CHANNELS, Map.of())),
                "once its lease ran out, all of them, in order; another application's row held nothing back");
        assertTrue(otherApplications < inFlight);
    }

    @Test
    void aChannelWhoseSendingWaitsHoldsBackNoOtherChannel() throws Exception {
        insert("audit", "instance-b", "now() + interval '1 minute'");
        long receipt = insert("receipts", "instance-b", "now() - interval '1 second'");
        long audit = insert("audit", "instance-b", "now() - interval '1 second'");
        assertEquals(List.of(receipt), ids(table.claimDue("instance-a", LEASE, 10, Set.of("receipts", "audit"),
                Map.of())), "the receipt leaves; the audit row waits for the audit row before it");
        assertTrue(receipt < audit);
    }

    @Test
    void rowsTheInstanceGaveUpSendingItselfAreClaimedAtOnceAndHoldNothingBack() throws Exception {
        long givenUp = insert("receipts", "instance-a", "now() + interval '1 minute'");
        long after = insert("receipts", "instance-b", "now() - interval '1 second'");
        long stillSent = insert("receipts", "instance-b", "now() + interval '1 minute'");
        assertEquals(List.of(givenUp, after), ids(table.claimDue("instance-a", LEASE, 10, CHANNELS,
                Map.of(givenUp, leasedUntil(givenUp)))), "the row given up, and the due one after it; not the one"
                        + " another sender still sends");
        assertEquals(List.of(), ids(table.claimDue("instance-a", LEASE, 10, CHANNELS, Map.of(stillSent, 1L))),
                "a row given up is claimed only as it was written");
    }

    @Test
    void twoRelaysClaimOneAfterTheOther() throws Exception {
        long first = insert("receipts", null, "now() - interval '1 second'");
        long second = insert("receipts", null, "now() - interval '1 second'");
        long third = insert("receipts", null, "now() - interval '1 second'");
        try (Connection a = dataSource.getConnection()) {
            // relay A's claim of the first two, not committed yet: as claimDue does it
            a.setAutoCommit(false);
            try (Statement s = a.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(hashtext('" + TABLE + " relay'))");
                s.executeUpdate("UPDATE " + TABLE + " SET lease_owner = 'relay-a', lease_until = now() + interval"
                        + " '1 minute' WHERE id IN (" + first + ", " + second + ")");
            }
            CompletableFuture<List<OutboxRow>> relayB = CompletableFuture
                    .supplyAsync(() -> table.claimDue("relay-b", LEASE, 10, CHANNELS, Map.of()));
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> !relayB.isDone());
            assertFalse(relayB.isDone(), "relay B waits for relay A's claim");
            a.commit();
            assertEquals(List.of(), ids(relayB.get(10, TimeUnit.SECONDS)),
                    "relay B sees A's claim and takes nothing after it: the third row leaves after the first two");
        }
        assertTrue(second < third);
    }

    @Test
    void aLeaseRenewedWhileItsSendingWaitsKeepsTheRowFromEveryOtherSender() throws Exception {
        long id = insert("receipts", null, "now() - interval '1 second'");
        Duration shortLease = Duration.ofSeconds(2);
        OutboxRow claimed = table.claimDue("instance-a", shortLease, 10, CHANNELS, Map.of()).get(0);
        // renewed with most of the lease gone (0.8 s of 2 s left), as the relay renews a sending that waits
        await().atMost(Duration.ofSeconds(5)).until(() -> databaseNow() > claimed.leasedUntil() - 800_000);
        Map<Long, Long> renewed = table.renew(Map.of(id, claimed.leasedUntil()), shortLease);
        assertTrue(renewed.get(id) > claimed.leasedUntil(), "renewed: " + renewed);
        await().atMost(Duration.ofSeconds(5)).until(() -> databaseNow() > claimed.leasedUntil()); // past the lease as claimed
        assertTrue(databaseNow() < renewed.get(id), "within the renewed one");
        assertEquals(List.of(), table.claimDue("instance-b", LEASE, 10, CHANNELS, Map.of()));

        assertEquals(Map.of(), table.renew(Map.of(id, claimed.leasedUntil()), shortLease),
                "a lease as it was before its renewal renews nothing");
    }

    @Test
    void aSenderWhoseLeaseWasTakenOverChangesNothing() throws Exception {
        long id = insert("receipts", "instance-a", "now() + interval '200 milliseconds'");
        long written = leasedUntil(id);
        await().atMost(Duration.ofSeconds(5)).until(() -> databaseNow() > written);
        // the same instance's relay takes the row over: same owner, a new lease
        OutboxRow relayed = table.claimDue("instance-a", LEASE, 10, CHANNELS, Map.of()).get(0);
        assertNotEquals(written, relayed.leasedUntil());

        // the fast path learns late that its sending failed, or was confirmed
        table.failed(List.of(Map.entry(id, written)), "refused", Duration.ofMillis(0));
        assertEquals(relayed.leasedUntil(), leasedUntil(id), "the relay's lease stands: no third sender may claim it");
        assertEquals(0, table.deleteSent(Map.of(id, written)), "not deleted under the relay's sending");
        assertEquals(1, table.deleteSent(Map.of(id, relayed.leasedUntil())), "by the lease's holder");
    }

    @Test
    void theRowsAfterOneTheChannelDidNotTakeBecomeDueWithItAndLeaveAfterIt() throws Exception {
        long first = insert("receipts", "instance-a", "now() + interval '1 minute'");
        long second = insert("receipts", "instance-a", "now() + interval '1 minute'");
        long third = insert("receipts", "instance-a", "now() + interval '1 minute'");
        table.failed(List.of(Map.entry(first, leasedUntil(first)), Map.entry(second, leasedUntil(second)),
                Map.entry(third, leasedUntil(third))), "buffer full", Duration.ofMillis(300));
        assertEquals(List.of(), ids(table.claimDue("instance-b", LEASE, 10, CHANNELS, Map.of())), "after the delay");
        long due = leasedUntil(first);
        await().atMost(Duration.ofSeconds(5)).until(() -> databaseNow() > due);
        List<OutboxRow> rows = table.claimDue("instance-b", LEASE, 10, CHANNELS, Map.of());
        assertEquals(List.of(first, second, third), ids(rows));
        assertEquals(List.of(1, 0, 0), rows.stream().map(OutboxRow::attempts).toList(),
                "the failed sending counted on its row only");
    }

    @Test
    void atTheFirstMessageItsChannelDoesNotTakeTheRestOfTheTransactionGoesToTheRelayWithIt() throws Exception {
        ChannelOutbox<String> open = channel("receipts");
        ChannelOutbox<String> unsubscribed = channel("audit"); // no subscriber: emit throws, as with a full buffer
        List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.smallrye.mutiny.Multi.createFrom().publisher(open.getPublisher()).subscribe().with(message -> {
            received.add(message.getPayload());
            message.ack();
        });
        OutboxSender sender = new OutboxSender(table, new OutboxSettings(LEASE, 500, Duration.ofSeconds(1),
                Duration.ofMinutes(5)), Runnable::run, Map.of("receipts", open, "audit", unsubscribed),
                new OutboxCounters());
        long first = insert("receipts", "instance-a", "now() + interval '1 minute'");
        long second = insert("audit", "instance-a", "now() + interval '1 minute'");
        long third = insert("receipts", "instance-a", "now() + interval '1 minute'");

        sender.sendInOrder(List.of(row(first, "receipts", "first"), row(second, "audit", "second"),
                row(third, "receipts", "third")), System.nanoTime());

        assertEquals(List.of("first"), received, "the third message is not sent before the second");
        assertEquals("1 0", attemptsOf(second, third), "the failed sending counted on the second only");
        assertEquals("2 1", text("SELECT count(*) || ' ' || count(DISTINCT lease_until) FROM " + TABLE + " WHERE id IN ("
                + second + ", " + third + ") AND lease_owner IS NULL"), "both left to the relay, due at the same time");
        await().atMost(Duration.ofSeconds(5)).until(() -> "0".equals(text("SELECT count(*)::text FROM " + TABLE
                + " WHERE id = " + first)));
    }

    private ChannelOutbox<String> channel(String name) {
        return new ChannelOutbox<>(new io.smallrye.reactive.messaging.EmitterConfiguration() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public io.smallrye.reactive.messaging.annotations.EmitterFactoryFor emitterType() {
                return null;
            }

            @Override
            public org.eclipse.microprofile.reactive.messaging.OnOverflow.Strategy overflowBufferStrategy() {
                return org.eclipse.microprofile.reactive.messaging.OnOverflow.Strategy.BUFFER;
            }

            @Override
            public long overflowBufferSize() {
                return 16;
            }

            @Override
            public boolean broadcast() {
                return false;
            }

            @Override
            public int numberOfSubscriberBeforeConnecting() {
                return 0;
            }
        }, 16, null);
    }

    private OutboxRow row(long id, String channel, String payload) throws SQLException {
        return new OutboxRow(id, "m-" + id, channel, null, payload, 0, leasedUntil(id));
    }

    private String attemptsOf(long... ids) throws SQLException {
        StringBuilder attempts = new StringBuilder();
        for (long id : ids) {
            attempts.append(attempts.length() == 0 ? "" : " ").append(text("SELECT coalesce((SELECT attempts::text FROM "
                    + TABLE + " WHERE id = " + id + "), 'gone')"));
        }
        return attempts.toString();
    }

    private String text(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private long insert(String channel, String owner, String leaseUntil) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("INSERT INTO " + TABLE + " (message_id, channel, payload_type, payload,"
                        + " lease_owner, lease_until) VALUES (gen_random_uuid()::text, '" + channel + "', 'string',"
                        + " '\\x00', " + (owner == null ? "NULL" : "'" + owner + "'") + ", " + leaseUntil
                        + ") RETURNING id")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** @return the database's clock, in the microseconds the leases are read in */
    private long databaseNow() throws SQLException {
        return Long.parseLong(text("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text"));
    }

    private long leasedUntil(long id) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT (extract(epoch FROM lease_until) * 1000000)::bigint FROM " + TABLE
                        + " WHERE id = " + id)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private void execute(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static List<Long> ids(List<OutboxRow> rows) {
        return rows.stream().map(OutboxRow::id).toList();
    }
}
