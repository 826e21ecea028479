package io.quarkiverse.idempotency.runtime.database;

import java.util.function.Function;

import io.smallrye.mutiny.Uni;

/**
 * Statements that need one connection, for the key table's upkeep ({@link Partitions}): in a transaction of their own,
 * or on a connection outside any transaction block. Over JDBC ({@link KeyTable#sessions()}, answered on the caller's
 * thread) or the reactive client's pool ({@link PoolSessions}, answered later, nothing blocked).
 */
interface SqlSessions {

    /**
     * Runs statements in one transaction of their own: committed when the work's answer comes, rolled back when it
     * fails. A caller's transaction is neither joined nor nested.
     *
     * @param failure what failed, for the exception's message
     */
    <T> Uni<T> inTransaction(Function<SqlCalls, Uni<T>> work, String failure);

    /**
     * Runs statements on one connection outside any transaction block (each one commits on its own): a concurrent
     * detach, a session-level lock.
     *
     * @param failure what failed, for the exception's message
     */
    <T> Uni<T> onConnection(Function<SqlCalls, Uni<T>> work, String failure);
}
