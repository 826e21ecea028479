package io.quarkiverse.idempotency.runtime.database;

import java.util.function.Function;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/** {@link SqlSessions} on connections of the reactive client's pool: nothing blocks a thread. */
final class PoolSessions implements SqlSessions {

    private final Pool pool;

    PoolSessions(Pool pool) {
        this.pool = pool;
    }

    @Override
    public <T> Uni<T> inTransaction(Function<SqlCalls, Uni<T>> work, String failure) {
        return said(pool.withTransaction(connection -> work.apply(new PoolCalls(connection))), failure);
    }

    @Override
    public <T> Uni<T> onConnection(Function<SqlCalls, Uni<T>> work, String failure) {
        return said(pool.withConnection(connection -> work.apply(new PoolCalls(connection))), failure);
    }

    // the same failure as over JDBC (KeyTable#connect): what failed, and why
    private static <T> Uni<T> said(Uni<T> work, String failure) {
        return work.onFailure().transform(e -> new IllegalStateException(failure + ": " + e.getMessage(), e));
    }
}
