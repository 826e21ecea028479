package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/**
 * The partitions of a time-partitioned key table: created ahead of the keys that will need them, dropped once every
 * key in them has expired. A partition holds the keys whose expiry falls in its period, so a key is kept at least its
 * retention and at most its retention plus one period; dropping a partition writes no row, leaves no dead tuple and no
 * index hole behind.
 * <p>
 * Every write of a key first checks, in memory, that a partition holds its expiry ({@link #cover}); the purge job keeps
 * partitions a retention and two periods ahead, so that check finds one except when no purge ran for a period.
 * <p>
 * Written once for both ways to the table ({@link SqlSessions}): over JDBC each operation is answered on the caller's
 * thread; through the reactive client, later, without blocking one.
 */
final class Partitions {

    private static final Logger LOG = Logger.getLogger(Partitions.class);
    /**
     * The longest a creation of partitions may take (its statements wait at most 10 s for a lock each): every writer
     * needing a partition waits for it.
     */
    private static final Duration CREATION_WITHIN = Duration.ofSeconds(60);
    /** Partitions estimated below this many keys are counted exactly before they are dropped. */
    private static final long EXACT_BELOW = 100_000;

    /** A partition and its bounds (null for MINVALUE or MAXVALUE). */
    record Partition(String name, Instant from, Instant to, boolean detachPending, long estimatedRows) {
    }

    private final SqlSessions sessions;
    private final String table;
    private final Duration period;
    /** The longest retention a key was written with so far (or configured): how far ahead partitions must reach. */
    private volatile long longestRetentionMillis;
    /** The end of the last partition, as last read; 0 before the first read. */
    private volatile long coveredUntilMillis;
    /**
     * When the oldest partition still holding live keys ends, as the last drop saw it: on the JVM's monotonic clock
     * ({@link System#nanoTime()}), measured from the database's own {@code now()}, so that the two clocks' skew does
     * not matter; {@code Long.MIN_VALUE} before the first drop.
     */
    private volatile long nextEndNanos = Long.MIN_VALUE;
    /** The creation of partitions under way, which every writer that needs one joins; null when none runs. */
    private final AtomicReference<CompletableFuture<Integer>> creating = new AtomicReference<>();

    Partitions(SqlSessions sessions, String table, Duration period, Duration retention) {
        this.sessions = sessions;
        this.table = table;
        this.period = period;
        this.longestRetentionMillis = retention.toMillis();
    }

    Duration period() {
        return period;
    }

    /** @return whether a partition holds a key written now with this retention, as far as is known in memory */
    boolean covers(Duration retention) {
        return System.currentTimeMillis() + retention.toMillis() + period.toMillis() < coveredUntilMillis;
    }

    /**
     * Partitions reach at least this retention ahead from now on: the longest one this application writes keys with,
     * known at startup, so that no write has to have partitions made (it would wait for them).
     */
    void reach(Duration retention) {
        synchronized (this) {
            if (retention.toMillis() > longestRetentionMillis) {
                longestRetentionMillis = retention.toMillis();
            }
        }
    }

    /**
     * Makes sure a partition holds a key written now with this retention: in memory unless the partitions reach too
     * short (a longer retention than any known, or no purge for a period), then by creating the missing ones, or
     * joining their creation under way. A creation that started before this retention was known may not reach it:
     * callers check {@link #covers} again, on their own thread, and call this once more.
     */
    Uni<Void> cover(Duration retention) {
        if (covers(retention)) {
            return Uni.createFrom().voidItem();
        }
        reach(retention);
        return createAhead().replaceWithVoid();
    }

    /**
     * Creates the partitions up to the longest retention and two periods from now, each starting where the last one
     * ends (so instances configured with different periods never overlap). Instances take turns; in this one, a call
     * while another creates them joins it. The creation runs on its own: a caller that stops waiting (a timeout, a
     * cancelled delivery) neither stops it nor the others' wait.
     *
     * @return how many it created
     */
    Uni<Integer> createAhead() {
        return Uni.createFrom().deferred(() -> {
            CompletableFuture<Integer> mine = new CompletableFuture<>();
            CompletableFuture<Integer> running = creating.compareAndExchange(null, mine);
            if (running == null) {
                running = mine;
                // over JDBC, done before this returns, on this thread (in its transaction context); through the pool,
                // later on an event loop, within a limit (a connection that hangs would hold every writer joining it)
                try {
                    create().ifNoItem().after(CREATION_WITHIN).fail().subscribe().with(created -> {
                        creating.compareAndSet(mine, null);
                        mine.complete(created);
                    }, failure -> ended(mine, failure));
                } catch (RuntimeException | Error e) {
                    ended(mine, e);
                }
            }
            // a copy for each caller: one that cancels its wait cancels its copy only
            return Uni.createFrom().completionStage(running.copy());
        });
    }

    // the creation failed: the next caller starts another
    private void ended(CompletableFuture<Integer> creation, Throwable failure) {
        creating.compareAndSet(creation, null);
        creation.completeExceptionally(failure);
    }

    private Uni<Integer> create() {
        int[] created = { 0 };
        return sessions.inTransaction(db -> db.execute(TableStatements.schemaLockTimeout())
                .chain(() -> db.execute(PartitionStatements.creationLock(table)))
                .chain(() -> list(db))
                .chain(partitions -> now(db).chain(now -> {
                    Instant horizon = now.plusMillis(longestRetentionMillis).plus(period.multipliedBy(2));
                    Instant last = partitions.stream().map(Partition::to).filter(t -> t != null)
                            .max(Instant::compareTo).orElse(null);
                    Instant from = last;
                    if (from == null || from.isBefore(now)) {
                        // the first partition, or none reaching the present (none ran for a long time): start at a
                        // period boundary before now, so that every instance starts on the same ones
                        long p = period.toMillis();
                        Instant aligned = Instant.ofEpochMilli(Math.floorDiv(now.toEpochMilli(), p) * p);
                        from = from == null || aligned.isAfter(from) ? aligned : from;
                    }
                    List<String> statements = new ArrayList<>();
                    Instant start = from;
                    for (; start.isBefore(horizon); start = start.plus(period)) {
                        statements.addAll(PartitionStatements.createPartition(table, start, start.plus(period)));
                        created[0]++;
                    }
                    return db.executeAll(statements).replaceWith(start);
                })), "Could not create the partitions of the idempotency table '" + table + "'")
                .map(coveredUntil -> {
                    // known only once committed
                    coveredUntilMillis = coveredUntil.toEpochMilli();
                    if (created[0] > 0) {
                        LOG.debugf("Created %d partitions of %s, up to %s", created[0], table, coveredUntil);
                    }
                    return created[0];
                });
    }

    /**
     * Drops the partitions whose every key has expired: each detached concurrently (claims go on meanwhile), then
     * dropped. One instance at a time; another one finding it busy drops nothing. Outside any transaction, even when
     * called inside one ({@code IdempotencyPurge} from a {@code @Transactional} method): a concurrent detach cannot run
     * in a transaction block, and the session-level lock that makes the instances take turns must be released on a
     * connection that is not left in an aborted transaction.
     *
     * @return the number of keys dropped (counted for partitions of up to 100,000 keys, else estimated)
     */
    Uni<Long> dropExpired() {
        return sessions.onConnection(db -> db.query(PartitionStatements.dropLock(table)).chain(locked -> {
            if (!locked.get(0).isTrue(0)) {
                // another instance drops them: look again in a period (the purge job's runs too)
                nextEndNanos = System.nanoTime() + period.toNanos();
                return Uni.createFrom().item(0L);
            }
            return dropExpired(db).eventually(() -> db.execute(PartitionStatements.dropUnlock(table)));
        }), "Could not drop the expired partitions of the idempotency table '" + table + "'");
    }

    private Uni<Long> dropExpired(SqlCalls db) {
        long measured = System.nanoTime();
        return now(db).chain(now -> list(db).chain(partitions -> {
            Instant nextEnd = null;
            List<Partition> ended = new ArrayList<>();
            for (Partition partition : partitions) {
                if (partition.to() == null || partition.to().isAfter(now)) {
                    if (partition.to() != null && (nextEnd == null || partition.to().isBefore(nextEnd))) {
                        nextEnd = partition.to();
                    }
                } else {
                    ended.add(partition);
                }
            }
            Instant end = nextEnd;
            // one after the other, however many (after a long stop): a stream, not a chain as deep as they are many
            Uni<Long> dropped = Multi.createFrom().iterable(ended).onItem()
                    .transformToUniAndConcatenate(partition -> drop(db, partition))
                    .collect().with(Collectors.summingLong(Long::longValue));
            // detached by a purge that stopped before dropping them
            return dropped.call(() -> db.query(PartitionStatements.orphans(), PartitionStatements.comment(table))
                    .chain(orphans -> db.executeAll(orphans.stream()
                            .map(orphan -> PartitionStatements.drop(orphan.string(0))).toList())))
                    .invoke(() -> nextEndNanos = end == null ? Long.MIN_VALUE
                            : measured + Duration.between(now, end).toNanos());
        }));
    }

    /**
     * @return how long until the oldest partition that still holds live keys ends, and can be dropped, as the last drop
     *         saw it (negative when that time has passed); empty before the first drop, or when it found no partition
     *         ahead
     */
    Optional<Duration> untilNextEnd() {
        long end = nextEndNanos;
        return end == Long.MIN_VALUE ? Optional.empty() : Optional.of(Duration.ofNanos(end - System.nanoTime()));
    }

    /**
     * @return the keys a partition holds: counted when it is small (or was never analysed), else PostgreSQL's estimate,
     *         so that dropping a partition of millions of keys never scans it
     */
    private static Uni<Long> rows(SqlCalls db, Partition partition) {
        if (partition.estimatedRows() >= EXACT_BELOW) {
            return Uni.createFrom().item(partition.estimatedRows());
        }
        return db.query("SELECT count(*) FROM " + partition.name()).map(rows -> rows.get(0).number(0));
    }

    /** @return the table's partitions, read on a connection of its own */
    Uni<List<Partition>> list() {
        return sessions.onConnection(this::list, "Could not list the partitions of '" + table + "'");
    }

    // detached concurrently (or its interrupted detach completed), then dropped: its keys, counted first
    private Uni<Long> drop(SqlCalls db, Partition partition) {
        return rows(db, partition)
                .call(() -> db.execute(partition.detachPending()
                        ? PartitionStatements.finalizeDetach(table, partition.name())
                        : PartitionStatements.detach(table, partition.name())))
                .call(() -> db.execute(PartitionStatements.drop(partition.name())))
                .invoke(rows -> LOG.debugf("Dropped partition %s (keys expiring before %s: %d)", partition.name(),
                        partition.to(), rows));
    }

    private Uni<List<Partition>> list(SqlCalls db) {
        return db.query(PartitionStatements.partitions(), table).map(rows -> {
            List<Partition> partitions = new ArrayList<>(rows.size());
            for (SqlRow row : rows) {
                partitions.add(new Partition(row.string(0), instant(row.number(1)), instant(row.number(2)),
                        row.isTrue(3), row.number(4)));
            }
            return partitions;
        });
    }

    private static Uni<Instant> now(SqlCalls db) {
        return db.query(PartitionStatements.now()).map(rows -> Instant.ofEpochMilli(rows.get(0).number(0)));
    }

    private static Instant instant(Long micros) {
        return micros == null ? null
                : Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }
}
