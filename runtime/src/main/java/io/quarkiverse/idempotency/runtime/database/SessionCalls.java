package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.List;

import org.hibernate.reactive.mutiny.Mutiny;

import io.smallrye.mutiny.Uni;

/**
 * The key table's statements in a Hibernate Reactive handler's transaction ({@code @WithTransaction}), through its
 * session's reactive connection: native queries with the store's statements, nothing blocking.
 */
final class SessionCalls implements SqlCalls {

    private final Mutiny.QueryProducer session;

    SessionCalls(Mutiny.QueryProducer session) {
        this.session = session;
    }

    @Override
    public Uni<List<SqlRow>> query(String sql, Object... values) {
        return this.<Object> prepared(sql, values).getResultList().map(results -> {
            List<SqlRow> rows = new ArrayList<>(results.size());
            for (Object result : results) {
                // a query of one column answers its values, of several an array per row
                rows.add(new SqlRow(result instanceof Object[] columns ? columns : new Object[] { result }));
            }
            return rows;
        });
    }

    @Override
    public Uni<Integer> update(String sql, Object... values) {
        return prepared(sql, values).executeUpdate();
    }

    private <R> Mutiny.Query<R> prepared(String sql, Object... values) {
        Mutiny.Query<R> query = session.createNativeQuery(sql);
        for (int i = 0; i < values.length; i++) {
            Object value = values[i];
            query.setParameter(i + 1, value instanceof SqlArray array ? array.values() : value);
        }
        return query;
    }
}
