package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.smallrye.mutiny.Uni;

/**
 * A store whose keys live in the extension's PostgreSQL table, whose protocol ({@link KeyProtocol}) reaches it
 * from anywhere: a Hibernate Reactive handler's session ({@link SessionKeys}) and the reactive client's pool
 * ({@link PoolKeys}), whether the store itself talks JDBC ({@link DatabaseIdempotencyStore}) or the reactive client
 * ({@link PoolIdempotencyStore}).
 */
public interface SqlKeyStore extends IdempotencyStore {

    /** How long an operator's call (the dead letters listed or released) waits for its answer. */
    Duration OPERATOR_CALLS_WITHIN = Duration.ofSeconds(30);

    /** @return the key table's name, schema-qualified when configured so */
    String tableName();

    /**
     * Runs an operation on the key table, committed on its own, through the store's own way of reaching it (the Dev
     * UI's reads and releases): answered at once over JDBC, later through the reactive client.
     */
    <T> Uni<T> onTable(Function<SqlCalls, Uni<T>> operation);

    /** @return the protocol of the store's table, its statements with it */
    KeyProtocol protocol();

    /**
     * Readies the table for a key written now through a reactive session or pool: a table partitioned by time needs a
     * partition holding the key's expiry, found in memory, or else created, off the event loop, the caller's context
     * resumed after.
     *
     * @return whether the table is partitioned by time, so that the partitioned statements are to be used
     */
    Uni<Boolean> readyToWrite(Duration retention);

    /**
     * A reactive write found the table's layout other than it was told ({@link ReactiveLayout#changed}: moved to
     * partitions while this instance ran): reads it again, off the event loop, so that the next attempt takes the
     * statements of the layout it has.
     *
     * @return whether the table is partitioned by time
     */
    Uni<Boolean> layoutChanged();

    /** @return whether the table is partitioned by time, as last read (at startup, and when a write found it moved) */
    boolean partitioned();

    /**
     * @return partitioned, how long until the oldest partition that holds live keys ends (its keys then all expired),
     *         as the last purge saw it; empty unpartitioned or before the first purge
     */
    Optional<Duration> untilPartitionEnd();

    /** @return the most lease-mode claims (and, apart, confirms) that share one statement; 1: each on its own */
    int leaseBatchSize();

    /**
     * The dead-lettered rows, listed the same way whichever way the store reaches its table ({@link DeadLetterRows}).
     * For operators: a statement committed on its own, awaited.
     */
    @Override
    default List<DeadLetter> deadLetters(DeadLetterFilter filter) {
        return onTable(DeadLetterRows.list(tableName(), filter)).await().atMost(OPERATOR_CALLS_WITHIN);
    }

    /** The dead-lettered rows, released the same way whichever way the store reaches its table ({@link DeadLetterRows}). */
    @Override
    default int releaseDeadLetters(DeadLetterFilter filter) {
        return onTable(DeadLetterRows.release(tableName(), filter)).await().atMost(OPERATOR_CALLS_WITHIN);
    }
}
