package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The reactive consumers' scenarios ({@link ReactivePaymentScenarios}) on a key table partitioned by time: a Hibernate
 * Reactive consumer's key written in its session's transaction, and the event-loop consumers' lease-mode claims,
 * batches and failure counts through the reactive client, with the partitioned table's statements (its functions
 * taking the key's lock); the partitions managed over JDBC by the store. The reactive channels keep their keys 30 and
 * 60 days, longer than the partitions made at startup reach (the configured retention's): the first write of each (a
 * session's claim, then the reactive client's) has the partitions created on a worker thread, never on the event loop
 * ({@code nothingBlockedTheEventLoop}), and resumes on its context.
 */
class ReactivePaymentsOnPartitionsTest extends ReactivePaymentScenarios {

    @RegisterExtension
    static final QuarkusUnitTest APP = app("reactive_partitioned_test")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.channels.\"reactive-payments\".retention", "30d")
            .overrideConfigKey("quarkus.idempotency.channels.\"lease-payments\".retention", "60d");

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
