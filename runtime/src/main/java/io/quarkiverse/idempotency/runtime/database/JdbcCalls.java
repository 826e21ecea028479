package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.quarkiverse.idempotency.runtime.SameThread;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;

/**
 * The key table's statements over JDBC, on one connection and the caller's thread: every call is answered before it
 * returns, so that {@link #answered} reads a {@link KeyProtocol} operation's outcome without waiting.
 */
final class JdbcCalls implements SqlCalls {

    private final Connection connection;

    JdbcCalls(Connection connection) {
        this.connection = connection;
    }

    @Override
    public Uni<List<SqlRow>> query(String sql, Object... values) {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            bind(ps, values);
            try (ResultSet rs = ps.executeQuery()) {
                int columns = rs.getMetaData().getColumnCount();
                List<SqlRow> rows = new ArrayList<>(1);
                while (rs.next()) {
                    Object[] row = new Object[columns];
                    for (int i = 0; i < columns; i++) {
                        Object value = rs.getObject(i + 1);
                        // an array as the reactive client gives it, read while its result set is open
                        row[i] = value instanceof java.sql.Array array ? array.getArray() : value;
                    }
                    rows.add(new SqlRow(row));
                }
                return Uni.createFrom().item(rows);
            }
        } catch (SQLException e) {
            return Uni.createFrom().failure(e);
        }
    }

    @Override
    public Uni<Integer> update(String sql, Object... values) {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            bind(ps, values);
            return Uni.createFrom().item(ps.executeUpdate());
        } catch (SQLException e) {
            return Uni.createFrom().failure(e);
        }
    }

    @Override
    public Uni<Void> execute(String sql) {
        try (java.sql.Statement s = connection.createStatement()) {
            s.execute(sql);
            return Uni.createFrom().voidItem();
        } catch (SQLException e) {
            return Uni.createFrom().failure(e);
        }
    }

    /** Binds the parameters in order: strings, longs, integers, booleans and arrays. */
    void bind(PreparedStatement ps, Object... values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            Object value = values[i];
            if (value instanceof Long l) {
                ps.setLong(i + 1, l);
            } else if (value instanceof Integer n) {
                ps.setInt(i + 1, n);
            } else if (value instanceof Boolean b) {
                ps.setBoolean(i + 1, b);
            } else if (value instanceof SqlArray array) {
                ps.setArray(i + 1, connection.createArrayOf(array.type(), array.values()));
            } else {
                ps.setString(i + 1, (String) value);
            }
        }
    }

    /**
     * @return the outcome of an operation over this connection's calls, assembled and answered on this thread with no
     *         thread context captured by its operators ({@link SameThread}: each would cost a capture per message)
     * @throws SQLException a statement's failure, as the driver threw it
     */
    static <T> T answered(Connection connection, Function<SqlCalls, Uni<T>> operation) throws SQLException {
        return SameThread.<T, SQLException> run(() -> answered(operation.apply(new JdbcCalls(connection))));
    }

    /**
     * @return the outcome of an operation over {@link JdbcCalls}, which is there when the operation returns
     * @throws SQLException a statement's failure, as the driver threw it
     */
    static <T> T answered(Uni<T> operation) throws SQLException {
        Outcome<T> outcome = new Outcome<>();
        operation.subscribe().withSubscriber(outcome);
        if (!outcome.done) {
            throw new IllegalStateException("A JDBC call of the idempotency store was not answered on its thread;"
                    + " this is a bug of quarkus-idempotency, please report it");
        }
        if (outcome.failure instanceof SQLException sql) {
            throw sql;
        }
        if (outcome.failure instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (outcome.failure instanceof Error error) {
            throw error;
        }
        if (outcome.failure != null) {
            throw new IllegalStateException(outcome.failure);
        }
        return outcome.item;
    }

    private static final class Outcome<T> implements UniSubscriber<T> {
        boolean done;
        T item;
        Throwable failure;

        @Override
        public void onSubscribe(UniSubscription subscription) {
        }

        @Override
        public void onItem(T item) {
            this.item = item;
            this.done = true;
        }

        @Override
        public void onFailure(Throwable failure) {
            this.failure = failure;
            this.done = true;
        }
    }
}
