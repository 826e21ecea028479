package io.quarkiverse.idempotency.runtime.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import io.smallrye.mutiny.Uni;

/**
 * Partitions for a long retention made at once, answered on the caller's thread as over JDBC: 1,443 partitions of an
 * hour for 60 days, three statements each, on a thread with half a worker thread's stack. Chained one operator per
 * statement, a thousand of them overflowed a 1 MB stack (inside the JDBC driver's read, whose connection then hung at
 * its next commit: an application's startup never ended).
 */
class PartitionsInBulkTest {

    private final List<String> executed = new ArrayList<>();

    /** A table with no partition yet, on a database answering every statement at once. */
    private final SqlCalls database = new SqlCalls() {
        @Override
        public Uni<List<SqlRow>> query(String sql, Object... values) {
            if (sql.equals(PartitionStatements.now())) {
                return Uni.createFrom().item(List.of(new SqlRow(new Object[] { System.currentTimeMillis() })));
            }
            return Uni.createFrom().item(List.of()); // no partition
        }

        @Override
        public Uni<Integer> update(String sql, Object... values) {
            throw new UnsupportedOperationException(sql);
        }

        @Override
        public Uni<Void> execute(String sql) {
            executed.add(sql);
            return Uni.createFrom().voidItem();
        }
    };

    private final Partitions partitions = new Partitions(new SqlSessions() {
        @Override
        public <T> Uni<T> inTransaction(Function<SqlCalls, Uni<T>> work, String failure) {
            return work.apply(database);
        }

        @Override
        public <T> Uni<T> onConnection(Function<SqlCalls, Uni<T>> work, String failure) {
            return work.apply(database);
        }
    }, "keys", Duration.ofHours(1), Duration.ofDays(60));

    @Test
    void sixtyDaysOfHourlyPartitionsAreMadeWithoutDeepeningTheStack() throws Exception {
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread small = new Thread(null, () -> {
            try {
                outcome.set(partitions.createAhead().await().indefinitely());
            } catch (Throwable t) {
                outcome.set(t);
            }
        }, "small-stack", 512 * 1024);
        small.start();
        small.join();
        // from the hour boundary before now to 60 days and two hours ahead: 1,443 hours (1,442 exactly on the hour)
        int made = (Integer) outcome.get();
        assertTrue(made == 1443 || made == 1442, "partitions made: " + outcome.get());
        assertEquals(2 + 3 * made, executed.size(), "the lock timeout, the lock, three statements a partition");
        assertTrue(partitions.covers(Duration.ofDays(60)));
    }
}
