package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.DatabaseSchema;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An unpartitioned table, as Hibernate ORM made it, moved to partitions while four writers claim keys on it, half on
 * leases and half in their transactions: the keys written before keep their answers, no key is written twice, and a
 * claim caught by the move fails and is tried again (as its message would be redelivered).
 */
class PartitionMigrationTest {

    static final String TABLE = "migrated_keys";
    static final Duration RETENTION = Duration.ofSeconds(10);
    static final Duration LEASE = Duration.ofSeconds(30);

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], ClaimRace.class)
            .overrideConfigKey("quarkus.idempotency.database.table", TABLE)
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none")
            .overrideConfigKey("quarkus.idempotency.database.partition-period", "2s")
            .overrideConfigKey("quarkus.idempotency.retention", "10s")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    DatabaseSchema schema;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void aTableInUseMovesToPartitionsKeepingItsKeysAndWritingNoKeyTwice() throws Exception {
        Sql sql = new Sql(dataSource);
        assertEquals("r", sql.query("SELECT relkind::text FROM pg_class WHERE oid = '" + TABLE + "'::regclass"));
        ScopedKey handled = new ScopedKey("old", "handled");
        ScopedKey poison = new ScopedKey("old", "poison");
        ScopedKey running = new ScopedKey("old", "running");
        assertEquals(ClaimResult.NEW, QuarkusTransaction.requiringNew()
                .call(() -> store.claimInTransaction(handled, "t", RETENTION)).result());
        assertEquals(1, store.recordFailure(poison, "t", "poison", 1, RETENTION));
        assertEquals(ClaimResult.NEW, store.claim(running, "holder", LEASE, RETENTION).result());

        int writers = 4;
        List<String> keys = ClaimRace.keys(1_500);
        Map<String, AtomicInteger> wins = new ConcurrentHashMap<>();
        AtomicInteger retried = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<Future<?>> done = new ArrayList<>();
        try {
            for (int w = 0; w < writers; w++) {
                int writer = w;
                List<String> order = new ArrayList<>(keys);
                Collections.shuffle(order);
                done.add(pool.submit(() -> {
                    start.await();
                    for (String k : order) {
                        ScopedKey key = new ScopedKey("new", k);
                        String token = "w" + writer + "#" + k;
                        for (int attempt = 0;; attempt++) {
                            try {
                                Claim claim = writer % 2 == 0 ? store.claim(key, token, LEASE, RETENTION)
                                        : QuarkusTransaction.requiringNew()
                                                .call(() -> store.claimInTransaction(key, token, RETENTION));
                                if (claim.claimed()) {
                                    wins.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
                                }
                                break;
                            } catch (RuntimeException e) {
                                if (attempt == 20) {
                                    throw e;
                                }
                                retried.incrementAndGet();
                                Thread.sleep(50);
                            }
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            // the move starts with the writers in full swing
            await().atMost(Duration.ofSeconds(30)).until(() -> wins.size() >= 100);
            schema.moveToPartitions();
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }

        assertEquals("p", sql.query("SELECT relkind::text FROM pg_class WHERE oid = '" + TABLE + "'::regclass"));
        assertTrue(store.partitioned());
        assertEquals("FOR VALUES FROM (MINVALUE)", sql.query("SELECT substring(pg_get_expr(relpartbound, oid) FROM"
                + " '^FOR VALUES FROM \\(MINVALUE\\)') FROM pg_class WHERE oid = '" + TABLE + "_plegacy'::regclass"),
                "the old table is the first partition, of every expiry up to a bound");
        assertEquals(1_500, wins.size(), "every key was won");
        wins.forEach((k, n) -> assertEquals(1, n.get(), "exactly one writer won " + k));
        assertEquals("1500", sql.query("SELECT count(*)::text FROM " + TABLE + " WHERE scope = 'new'"),
                "one row per key");
        assertEquals(ClaimResult.DONE, store.claim(handled, "again", LEASE, RETENTION).result());
        assertEquals(ClaimResult.DEAD_LETTERED, store.claim(poison, "again", LEASE, RETENTION).result());
        assertEquals(ClaimResult.BUSY, store.claim(running, "again", LEASE, RETENTION).result());
        assertTrue(store.confirm(running, "holder", RETENTION), "a claim of before is confirmed by its holder");
        assertEquals(ClaimResult.DONE, QuarkusTransaction.requiringNew()
                .call(() -> store.claimInTransaction(running, "again", RETENTION)).result());
        // a key kept past the old table's bound (the retention, and at least an hour more) gets a partition after it
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("new", "long"), "t", LEASE,
                Duration.ofHours(1).plusMinutes(1)).result());
        assertEquals("true", sql.query("SELECT (count(*) > 1)::text FROM pg_inherits WHERE inhparent = '" + TABLE
                + "'::regclass"), "partitions follow the old table's bound");
        System.out.printf("PartitionMigrationTest: %d claims caught by the move and tried again%n", retried.get());
    }
}
