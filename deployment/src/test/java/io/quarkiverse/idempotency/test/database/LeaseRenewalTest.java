package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * Lease renewal never waits on one row: a lease-mode {@code @Transactional} handler whose confirm holds its row lock
 * through a slow commit does not stop the renewal of another handler's claim, whose lease would otherwise run out
 * under it (and a second process would run it too).
 */
class LeaseRenewalTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "locking", "slow" }, Handlers.class,
            Charge.class)
            .overrideConfigKey("quarkus.idempotency.lease", "3s");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Handlers handlers;

    @Inject
    AgroalDataSource dataSource;

    @BeforeEach
    void clean() throws SQLException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
    }

    @Test
    void aRowLockedByASlowCommitDoesNotStallTheRenewalOfOtherClaims() throws Exception {
        Delivered<String> slow = Delivered.withId("s-1", "s-1");
        connector.source("slow").send(slow.message());
        assertTrue(handlers.slowStarted.await(10, TimeUnit.SECONDS));
        Delivered<String> locking = Delivered.withId("l-1", "l-1");
        connector.source("locking").send(locking.message());
        assertTrue(handlers.committing.await(10, TimeUnit.SECONDS), "the locking handler's commit began");

        // For 5 s (longer than the 3 s lease) the slow handler's claim must stay live.
        List<Double> leaseLeft = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < end) {
            String left = new Sql(dataSource).query("SELECT coalesce(extract(epoch FROM lease_until - now())::text,"
                    + " state) FROM idempotency_record WHERE scoped_key = 'slow:s-1'");
            leaseLeft.add(left == null ? Double.NaN : left.matches("-?[0-9.]+") ? Double.valueOf(left) : Double.NaN);
            Thread.sleep(250);
        }
        assertTrue(leaseLeft.stream().allMatch(left -> left > 0), "the slow handler's claim stayed live, its lease never"
                + " ran out (NaN: no claim): " + leaseLeft + "; rows: " + new Sql(dataSource).query(
                        "SELECT string_agg(scoped_key || ' ' || state || ' ' || coalesce(lease_until::text, '-'), ', ')"
                                + " FROM idempotency_record"));

        await().atMost(Duration.ofSeconds(30)).until(() -> slow.settled() && locking.settled());
        assertEquals(1, slow.acks());
        assertEquals(1, locking.acks());
        assertEquals(1, handlers.slowRuns.get());
    }

    @Singleton
    public static class Handlers {
        final CountDownLatch slowStarted = new CountDownLatch(1);
        final CountDownLatch committing = new CountDownLatch(1);
        final AtomicInteger slowRuns = new AtomicInteger();

        @Inject
        TransactionSynchronizationRegistry transactions;

        // unordered: the in-memory channels share a context, whose ordered blocking work would run one at a time
        @Incoming("locking")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Blocking(ordered = false)
        @Transactional
        void locking(String id) {
            Charge.of(id).persistAndFlush();
            transactions.registerInterposedSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                    // the key's confirm ran already, in this transaction: its row stays locked while this lasts
                    committing.countDown();
                    sleep(7_000);
                }

                @Override
                public void afterCompletion(int status) {
                }
            });
        }

        @Incoming("slow")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Blocking(ordered = false)
        void slow(String id) {
            slowRuns.incrementAndGet();
            slowStarted.countDown();
            sleep(9_000);
        }

        private static void sleep(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
