package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** Lease-mode claims and confirms in batches ({@link LeaseBatchCases}), on one table. */
class LeaseBatchTest extends LeaseBatchCases {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], LeaseBatchCases.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "lease_batch_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            // the cases on one table (PartitionedLeaseBatchTest: on partitions, the default)
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Override
    String table() {
        return "lease_batch_keys";
    }

    /**
     * The batch's statement commits, then a key it could not claim (another transaction holds its lock) is looked at
     * again on the same session, and that session dies there: the look-up's request fails (a store failure, retried
     * later), but the key the statement claimed for another delivery of the batch reaches that delivery, rather than
     * staying claimed by nobody until its lease runs out (and being counted as an attempt when taken over). (On a
     * partitioned table the batch's function answers a locked key busy itself: no look-up after its commit.)
     */
    @Test
    void aLookUpThatFailsAfterTheBatchCommittedFailsItsRequestOnly() throws Exception {
        try (Connection locker = dataSource.getConnection(); Connection blocker = dataSource.getConnection()) {
            locker.setAutoCommit(false);
            try (Statement s = locker.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(hashtextextended('batch:locked', 0))");
            }
            Future<Claim> claimed;
            Future<Claim> locked;
            Future<Boolean> locking;
            try (Gate second = new Gate(SECOND)) {
                Future<Claim> slow;
                try (Gate first = new Gate(FIRST)) {
                    slow = submit(() -> store.claim(key("slow"), "s", LEASE, RETENTION));
                    awaitRunning(slow);
                    claimed = submit(() -> store.claim(key("slow-new"), "t-slow-new", LEASE, RETENTION));
                    locked = submit(() -> store.claim(key("locked"), "t-locked", LEASE, RETENTION));
                    await().atMost(WAIT).until(() -> store.leaseBatchesWaiting()[0] == 2);
                }
                assertEquals(ClaimResult.NEW, slow.get().result());
                // the batch of two is held in its statement; the table's lock is asked for behind it, so that once
                // the batch commits, the table is locked under its look-up
                awaitBatchAtSecondGate();
                blocker.setAutoCommit(false);
                locking = submit(() -> {
                    try (Statement s = blocker.createStatement()) {
                        return s.execute("LOCK TABLE " + table() + " IN ACCESS EXCLUSIVE MODE");
                    }
                });
                await().atMost(WAIT).until(() -> "1".equals(sql().query("SELECT count(*)::text FROM pg_stat_activity"
                        + " WHERE query LIKE '%LOCK TABLE%' AND wait_event_type = 'Lock'")));
            }
            String lookUp = "FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%existing%'"
                    + " AND query NOT LIKE '%unnest%' AND query NOT LIKE '%LOCK TABLE%' AND pid <> pg_backend_pid()";
            await().atMost(WAIT).until(() -> "1".equals(sql().query("SELECT count(*)::text "
                    + lookUp)));
            sql().execute("SELECT pg_terminate_backend(pid) " + lookUp);
            locking.get();
            blocker.rollback();

            ExecutionException failed = assertThrows(ExecutionException.class,
                    locked::get);
            assertInstanceOf(IllegalStateException.class, failed.getCause(), "a store failure: retried later");
            assertTrue(failed.getCause().getMessage().contains("batch:locked"), failed.getCause().getMessage());
            assertEquals(ClaimResult.NEW, claimed.get().result(), "the key the batch claimed is its delivery's");
            assertEquals("CLAIMED t-slow-new", sql().query("SELECT state || ' ' || claimed_by FROM " + table()
                    + " WHERE scoped_key = 'batch:slow-new'"));
            locker.rollback();
        }
        assertTrue(store.confirm(key("slow-new"), "t-slow-new", RETENTION), "its delivery confirms it");
        assertEquals(ClaimResult.NEW, store.claim(key("locked"), "again", LEASE, RETENTION).result(),
                "the failed request's redelivery claims its key");
    }
}
