package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * The reactive consumers' scenarios ({@link ReactivePaymentScenarios}) on a key table partitioned by time: a Hibernate
 * Reactive consumer's key written in its session's transaction, and the event-loop consumers' lease-mode claims,
 * batches and failure counts through the reactive client, with the partitioned table's statements (its functions
 * taking the key's lock); the partitions managed over JDBC by the store. The reactive channels keep their keys 30 and
 * 60 days, longer than the configured retention: partitions reach that far from startup. A write beyond them (a key
 * written through the store's API with a longer retention) from an event loop has them created on a worker thread,
 * never on the event loop, and resumes on its context.
 */
class ReactivePaymentsOnPartitionsTest extends ReactivePaymentScenarios {

    @RegisterExtension
    static final QuarkusUnitTest APP = app("reactive_partitioned_test")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.channels.\"reactive-payments\".retention", "30d")
            .overrideConfigKey("quarkus.idempotency.channels.\"lease-payments\".retention", "60d");

    @Inject
    IdempotencyStore store;

    @Inject
    Vertx vertx;

    @Test
    @Order(29)
    void aWriteBeyondThePartitionsOnAnEventLoopHasThemMadeOnAWorkerAndResumesOnItsContext() throws Exception {
        Context context = VertxContext.getOrCreateDuplicatedContext(vertx);
        CompletableFuture<Object[]> done = new CompletableFuture<>();
        context.runOnContext(ignored -> ((SqlKeyStore) store).readyToWrite(Duration.ofDays(90)).subscribe().with(
                partitioned -> done.complete(new Object[] { partitioned, Vertx.currentContext(),
                        Context.isOnEventLoopThread() }),
                done::completeExceptionally));
        Object[] answer = done.get(60, TimeUnit.SECONDS);
        assertEquals(true, answer[0], "partitioned");
        assertSame(context, answer[1], "resumed on the caller's context");
        assertEquals(true, answer[2], "on its event loop");
        try (Connection c = DriverManager.getConnection(Ledger.url(), TestServices.postgres().user(),
                TestServices.postgres().password());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid"
                        + " WHERE i.inhparent = 'idempotency_record'::regclass AND (regexp_match(pg_get_expr("
                        + "p.relpartbound, p.oid), 'TO \\(''([^'']*)''\\)'))[1]::timestamptz > now() + interval '90 days'")) {
            rs.next();
            assertTrue(rs.getLong(1) > 0, "a partition ending 90 days ahead");
        }
    }

    @Test
    @Order(30)
    void theKeysAreInPartitionsReachingTheirRetention() throws Exception {
        try (Connection c = DriverManager.getConnection(Ledger.url(), TestServices.postgres().user(),
                TestServices.postgres().password()); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_partitioned_table"
                    + " WHERE partrelid = 'idempotency_record'::regclass")) {
                rs.next();
                assertEquals(1, rs.getInt(1), "the key table is partitioned");
            }
            // the event-loop consumer's keys, written through the reactive client, expire in 60 days: in a partition
            // created for them
            try (ResultSet rs = s.executeQuery("SELECT count(*), min(tableoid::regclass::text) FROM idempotency_record"
                    + " WHERE scoped_key LIKE 'payments:charge:L-%' AND expires_at > now() + interval '59 days'")) {
                rs.next();
                assertTrue(rs.getLong(1) > 0, "keys written on the event loop with their 60 days");
                assertTrue(rs.getString(2).startsWith("idempotency_record_p"), rs.getString(2));
            }
        }
    }
}
