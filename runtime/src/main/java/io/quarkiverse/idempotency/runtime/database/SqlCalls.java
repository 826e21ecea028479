package io.quarkiverse.idempotency.runtime.database;

import java.util.List;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/**
 * One way of running the key table's statements, for {@link KeyProtocol}: JDBC on the caller's thread and connection
 * ({@link JdbcCalls}, answered at once), the reactive client's pool ({@link PoolCalls}) or a Hibernate Reactive
 * session ({@link SessionCalls}), both answered later. Statements are written with JDBC's question marks; parameters
 * are strings, longs, integers, booleans, {@code null} (a string) and {@link SqlArray}s.
 */
public interface SqlCalls {

    /** @return the rows of a query (or of an update with {@code RETURNING}) */
    Uni<List<SqlRow>> query(String sql, Object... values);

    /** @return how many rows an update changed */
    Uni<Integer> update(String sql, Object... values);

    /**
     * Runs a statement without parameters as it is written (DDL, a lock taken with {@code SELECT}), its rows ignored:
     * nothing prepared or cached for a statement that names a partition and runs once.
     */
    default Uni<Void> execute(String sql) {
        return update(sql).replaceWithVoid();
    }

    /**
     * Runs statements without parameters ({@link #execute}) one after the other, each once the one before answered:
     * a stream, so that however many there are (the partitions of a long retention), no chain of operators as deep as
     * they are many is built (a thousand such steps overflow a worker thread's stack).
     */
    default Uni<Void> executeAll(List<String> statements) {
        return Multi.createFrom().iterable(statements).onItem().transformToUniAndConcatenate(this::execute).collect()
                .last().replaceWithVoid();
    }

    /** An array parameter, with its element's SQL type ({@code varchar}, {@code bigint}). */
    record SqlArray(String type, Object[] values) {

        static SqlArray varchar(String[] values) {
            return new SqlArray("varchar", values);
        }

        static SqlArray bigint(Long[] values) {
            return new SqlArray("bigint", values);
        }
    }
}
