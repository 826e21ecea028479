package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The key table's statements through the reactive PostgreSQL client: its {@link Pool}, each statement committed on its
 * own, or one of its connections ({@link PoolSessions}); answered on the event loop, without blocking any thread.
 */
final class PoolCalls implements SqlCalls {

    private final SqlClient client;
    /** The statements with PostgreSQL's numbered parameters, by their JDBC text. */
    private final Map<String, String> numbered = new ConcurrentHashMap<>();

    PoolCalls(SqlClient client) {
        this.client = client;
    }

    @Override
    public Uni<List<SqlRow>> query(String sql, Object... values) {
        return run(sql, values).map(rows -> {
            List<SqlRow> read = new ArrayList<>(rows.size());
            for (Row row : rows) {
                Object[] columns = new Object[row.size()];
                for (int i = 0; i < columns.length; i++) {
                    columns[i] = row.getValue(i);
                }
                read.add(new SqlRow(columns));
            }
            return read;
        });
    }

    @Override
    public Uni<Integer> update(String sql, Object... values) {
        return run(sql, values).map(RowSet::rowCount);
    }

    @Override
    public Uni<Void> execute(String sql) {
        return client.query(sql).execute().replaceWithVoid();
    }

    private Uni<RowSet<Row>> run(String sql, Object... values) {
        Tuple tuple = Tuple.tuple();
        for (Object value : values) {
            tuple.addValue(value instanceof SqlArray array ? array.values() : value);
        }
        return client.preparedQuery(numbered.computeIfAbsent(sql, PoolCalls::numbered)).execute(tuple);
    }

    /**
     * @return the statement with PostgreSQL's numbered parameters ({@code $1}, {@code $2}, ...) for JDBC's question
     *         marks, which the reactive client does not take; a question mark inside a quoted literal stays
     */
    static String numbered(String jdbc) {
        StringBuilder sql = new StringBuilder(jdbc.length() + 16);
        boolean quoted = false;
        int n = 0;
        for (int i = 0; i < jdbc.length(); i++) {
            char c = jdbc.charAt(i);
            if (c == '\'') {
                quoted = !quoted;
            }
            if (c == '?' && !quoted) {
                sql.append('$').append(++n);
            } else {
                sql.append(c);
            }
        }
        return sql.toString();
    }
}
