package io.quarkiverse.idempotency.runtime.database;

import io.smallrye.mutiny.Uni;
import io.vertx.pgclient.PgException;

/**
 * The reactive writers' side of a layout change: a statement of the unpartitioned table run on a table that was moved
 * to partitions while this instance ran fails with {@code 42P10} (its {@code ON CONFLICT} finds no unique index), as
 * over JDBC; the store then reads the layout again, and the failure goes on (the delivery is retried, not counted,
 * and its next attempt takes the partitioned statements). Loaded only with the reactive PostgreSQL client.
 */
final class ReactiveLayout {

    /** ON CONFLICT without a unique index matching it. */
    private static final String NO_UNIQUE_INDEX = "42P10";

    private ReactiveLayout() {
    }

    /** @return the write, which reads the layout again when it fails so */
    static <T> Uni<T> watched(SqlKeyStore store, Uni<T> write) {
        return write.onFailure(ReactiveLayout::changed).call(store::layoutChanged);
    }

    /** @return whether a failure says the table has no unique index on the key: it was moved to partitions */
    static boolean changed(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof PgException pg && NO_UNIQUE_INDEX.equals(pg.getSqlState())) {
                return true;
            }
        }
        return false;
    }
}
