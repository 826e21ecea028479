package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jboss.logging.Logger;

/**
 * The partitions of a time-partitioned key table: created ahead of the keys that will need them, dropped once every
 * key in them has expired. A partition holds the keys whose expiry falls in its period, so a key is kept at least its
 * retention and at most its retention plus one period; dropping a partition writes no row, leaves no dead tuple and no
 * index hole behind.
 * <p>
 * Every write of a key first checks, in memory, that a partition holds its expiry ({@link #cover}); the purge job keeps
 * partitions a retention and two periods ahead, so that check finds one except when no purge ran for a period.
 */
final class Partitions {

    private static final Logger LOG = Logger.getLogger(Partitions.class);
    /** Partitions estimated below this many keys are counted exactly before they are dropped. */
    private static final long EXACT_BELOW = 100_000;

    /** A partition and its bounds (null for MINVALUE or MAXVALUE). */
    record Partition(String name, Instant from, Instant to, boolean detachPending, long estimatedRows) {
    }

    private final KeyTable table;
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

    Partitions(KeyTable table, Duration period, Duration retention) {
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
     * Makes sure a partition holds a key written now with this retention. In memory unless the partitions reach too
     * short (first use, a longer retention, or no purge for a period): then creates the missing ones.
     */
    void cover(Duration retention) {
        long needed = System.currentTimeMillis() + retention.toMillis() + period.toMillis();
        if (needed >= coveredUntilMillis) {
            synchronized (this) {
                if (retention.toMillis() > longestRetentionMillis) {
                    longestRetentionMillis = retention.toMillis();
                }
                // writers that waited here while another one created them find them made
                if (needed >= coveredUntilMillis) {
                    createAhead();
                }
            }
        }
    }

    /**
     * Creates the partitions up to the longest retention and two periods from now, each starting where the last one
     * ends (so instances configured with different periods never overlap). Instances take turns.
     *
     * @return how many it created
     */
    synchronized int createAhead() {
        int[] created = { 0 };
        Instant coveredUntil = table.transaction(c -> {
            try (Statement s = c.createStatement()) {
                s.execute(TableStatements.schemaLockTimeout());
                s.execute(PartitionStatements.creationLock(table.name()));
                List<Partition> partitions = list(c);
                Instant now = now(c);
                Instant horizon = now.plusMillis(longestRetentionMillis).plus(period.multipliedBy(2));
                Instant from = partitions.stream().map(Partition::to).filter(t -> t != null)
                        .max(Instant::compareTo).orElse(null);
                if (from == null || from.isBefore(now)) {
                    // the first partition, or none reaching the present (none ran for a long time): start at a period
                    // boundary before now, so that every instance starts on the same ones
                    long p = period.toMillis();
                    Instant aligned = Instant.ofEpochMilli(Math.floorDiv(now.toEpochMilli(), p) * p);
                    from = from == null || aligned.isAfter(from) ? aligned : from;
                }
                while (from.isBefore(horizon)) {
                    Instant to = from.plus(period);
                    for (String statement : PartitionStatements.createPartition(table.name(), from, to)) {
                        s.execute(statement);
                    }
                    created[0]++;
                    from = to;
                }
                return from;
            }
        }, "Could not create the partitions of the idempotency table '" + table.name() + "'");
        // known only once committed
        coveredUntilMillis = coveredUntil.toEpochMilli();
        if (created[0] > 0) {
            LOG.debugf("Created %d partitions of %s, up to %s", created[0], table.name(), coveredUntil);
        }
        return created[0];
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
    long dropExpired() {
        return table.outsideTransactions(() -> table.connect(c -> {
            try (Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery(PartitionStatements.dropLock(table.name()))) {
                    rs.next();
                    if (!rs.getBoolean(1)) {
                        return 0L;
                    }
                }
                try {
                    return dropExpired(c, s);
                } finally {
                    s.execute(PartitionStatements.dropUnlock(table.name()));
                }
            }
        }, "Could not drop the expired partitions of the idempotency table '" + table.name() + "'"));
    }

    private long dropExpired(Connection c, Statement s) throws SQLException {
        long dropped = 0;
        long measured = System.nanoTime();
        Instant now = now(c);
        Instant nextEnd = null;
        for (Partition partition : list(c)) {
            if (partition.to() == null || partition.to().isAfter(now)) {
                if (partition.to() != null && (nextEnd == null || partition.to().isBefore(nextEnd))) {
                    nextEnd = partition.to();
                }
                continue;
            }
            long rows = rows(s, partition);
            s.execute(partition.detachPending()
                    ? PartitionStatements.finalizeDetach(table.name(), partition.name())
                    : PartitionStatements.detach(table.name(), partition.name()));
            s.execute(PartitionStatements.drop(partition.name()));
            dropped += rows;
            LOG.debugf("Dropped partition %s (keys expiring before %s: %d)", partition.name(), partition.to(), rows);
        }
        // detached by a purge that stopped before dropping them
        List<String> orphans = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(PartitionStatements.orphans())) {
            ps.setString(1, PartitionStatements.comment(table.name()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    orphans.add(rs.getString(1));
                }
            }
        }
        for (String orphan : orphans) {
            s.execute(PartitionStatements.drop(orphan));
        }
        nextEndNanos = nextEnd == null ? Long.MIN_VALUE : measured + Duration.between(now, nextEnd).toNanos();
        return dropped;
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
    private static long rows(Statement s, Partition partition) throws SQLException {
        if (partition.estimatedRows() >= EXACT_BELOW) {
            return partition.estimatedRows();
        }
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM " + partition.name())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** @return the table's partitions */
    List<Partition> list() {
        return table.onItsOwn(() -> table.connect(this::list, "Could not list the partitions of '" + table.name() + "'"));
    }

    private List<Partition> list(Connection c) throws SQLException {
        List<Partition> partitions = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(PartitionStatements.partitions())) {
            ps.setString(1, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    partitions.add(new Partition(rs.getString(1), instant(rs.getTimestamp(2)),
                            instant(rs.getTimestamp(3)), rs.getBoolean(4), rs.getLong(5)));
                }
            }
        }
        return partitions;
    }

    private static Instant now(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT now()")) {
            rs.next();
            return rs.getTimestamp(1).toInstant();
        }
    }

    private static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toInstant();
    }
}
