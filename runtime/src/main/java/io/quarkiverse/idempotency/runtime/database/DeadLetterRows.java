package io.quarkiverse.idempotency.runtime.database;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.MessageFacts;
import io.smallrye.mutiny.Uni;

/**
 * The dead-lettered rows of a key table, listed and released by a {@link DeadLetterFilter}: statements written once
 * for every way a store reaches its table (JDBC, the reactive client's pool).
 */
final class DeadLetterRows {

    private static final String COLUMNS = "scoped_key, scope, recorded_at, attempts, last_failure, message_id,"
            + " fingerprint, expires_at";
    // Parameters: scope twice; the two stored forms a key may have, the first twice; the reason twice; since twice.
    // No condition on expires_at: a claim does not read it either, so a dead-lettered row past its expiry that the purge
    // has not removed yet still dead-letters its key's deliveries, and must be seen and released.
    private static final String MATCHING = " WHERE state = 'DEAD_LETTERED'"
            + " AND (?::varchar IS NULL OR scope = ?)"
            + " AND (?::varchar IS NULL OR scoped_key IN (?, ?))"
            + " AND (?::text IS NULL OR strpos(lower(last_failure), lower(?::text)) > 0)"
            + " AND (?::text IS NULL OR recorded_at >= CAST(?::text AS timestamptz))";

    private DeadLetterRows() {
    }

    /** @return the statement that reads the rows the filter matches, newest first, one page */
    static Function<SqlCalls, Uni<List<DeadLetter>>> list(String table, DeadLetterFilter filter) {
        String sql = "SELECT " + COLUMNS + " FROM " + table + MATCHING
                + " ORDER BY recorded_at DESC, scoped_key LIMIT ? OFFSET ?";
        Object[] values = append(matching(filter), filter.limit(), filter.offset());
        return db -> db.query(sql, values).map(rows -> {
            List<DeadLetter> read = new ArrayList<>(rows.size());
            for (SqlRow row : rows) {
                String scope = row.string(1);
                read.add(new DeadLetter(scope, TableStatements.unscoped(row.string(0), scope),
                        instant(row.instant(2)), row.count(3), row.string(4),
                        MessageFacts.of(row.string(5), row.string(6)), instant(row.instant(7))));
            }
            return read;
        });
    }

    /**
     * @return the statement that releases the dead-lettered rows the filter matches (free, with a fresh attempt
     *         budget), answering how many
     */
    static Function<SqlCalls, Uni<Integer>> release(String table, DeadLetterFilter filter) {
        String sql = "UPDATE " + table + " SET state = 'FAILED', attempts = 0, lease_until = NULL,"
                + " recorded_at = now()" + MATCHING;
        return db -> db.update(sql, matching(filter));
    }

    private static Object[] matching(DeadLetterFilter filter) {
        String stored = filter.key() == null ? null : StorageKeys.of(filter.scope(), filter.key());
        // a key too long for the column is shown as its digest, which is stored as it is, without its scope
        String digest = filter.key() != null && filter.key().startsWith(StorageKeys.DIGEST_PREFIX) ? filter.key()
                : stored;
        String since = filter.since() == null ? null : filter.since().toString();
        return new Object[] { filter.scope(), filter.scope(), stored, stored, digest, filter.reason(), filter.reason(),
                since, since };
    }

    private static Object[] append(Object[] values, Object... more) {
        Object[] all = new Object[values.length + more.length];
        System.arraycopy(values, 0, all, 0, values.length);
        System.arraycopy(more, 0, all, values.length, more.length);
        return all;
    }

    private static Instant instant(String iso) {
        return iso == null ? null : Instant.parse(iso);
    }
}
