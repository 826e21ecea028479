package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.function.Function;
import java.util.function.Supplier;

import javax.sql.DataSource;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;

/**
 * The key table on its datasource, and the JDBC plumbing every statement of the database store goes through: one
 * connection, one prepared statement, its parameters bound, its result read, an {@link SQLException} turned into an
 * {@link IllegalStateException} that says what failed.
 */
public final class KeyTable {

    /** Binds a statement's parameters. */
    @FunctionalInterface
    public interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    /** Reads a query's result. */
    @FunctionalInterface
    public interface Reader<T> {
        T read(ResultSet result) throws SQLException;
    }

    /** Runs statements on one connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(KeyTable.class);

    /** Whether a statement ran on an event loop thread: a defect, said once. */
    private static volatile boolean blockedAnEventLoop;

    private final DataSource dataSource;
    private final TransactionManager transactions;
    private final String name;

    public KeyTable(DataSource dataSource, TransactionManager transactions, String name) {
        this.dataSource = dataSource;
        this.transactions = transactions;
        this.name = name;
    }

    /** @return whether a statement of the store ever ran on an event loop thread (a defect, warned about once) */
    static boolean blockedAnEventLoop() {
        return blockedAnEventLoop;
    }

    /** @return the table's name, schema-qualified when configured so */
    public String name() {
        return name;
    }

    /**
     * Runs a query and reads its result.
     *
     * @param failure what failed, for the exception's message ("Could not claim key 'x'")
     */
    public <T> T query(String sql, Binder binder, Reader<T> reader, String failure) {
        return connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                binder.bind(ps);
                try (ResultSet rs = ps.executeQuery()) {
                    return reader.read(rs);
                }
            }
        }, failure);
    }

    /**
     * Runs an update.
     *
     * @param failure what failed, for the exception's message
     * @return the number of rows it changed
     */
    public int update(String sql, Binder binder, String failure) {
        return connect(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                binder.bind(ps);
                return ps.executeUpdate();
            }
        }, failure);
    }

    /**
     * Runs statements on one connection: the one enlisted in the caller's transaction, if any.
     *
     * @param failure what failed, for the exception's message
     */
    public <T> T connect(Work<T> work, String failure) {
        return connect(work, () -> failure);
    }

    /**
     * {@link #connect(Work, String)}, the failure's text built only if the work fails.
     *
     * @param failure what failed, for the exception's message
     */
    public <T> T connect(Work<T> work, Supplier<String> failure) {
        if (Context.isOnEventLoopThread() && !blockedAnEventLoop) {
            blockedAnEventLoop = true;
            LOG.calledOnEventLoop(new IllegalStateException("called here"), Thread.currentThread().getName(),
                    failure.get());
        }
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw new IllegalStateException(failure.get() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Runs statements in one transaction of their own, on one connection: committed when the work returns, rolled back
     * when it throws. Inside a caller's transaction (a handler's, a claim that finds no partition ahead), a new JTA
     * transaction that commits or rolls back the connection enlisted in it; outside one, the connection's own.
     *
     * @param failure what failed, for the exception's message
     */
    public <T> T transaction(Work<T> work, String failure) {
        if (inTransaction()) {
            return QuarkusTransaction.requiringNew().call(() -> connect(work, failure));
        }
        return connect(c -> {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }, failure);
    }

    /**
     * Runs work that must commit on its own. Outside a transaction a connection is in auto-commit, so a statement
     * commits on its own in one round trip; inside a caller's transaction, the work must not join it, so it runs in a
     * new one.
     */
    public <T> T onItsOwn(Supplier<T> work) {
        if (inTransaction()) {
            return QuarkusTransaction.requiringNew().call(work::get);
        }
        return work.get();
    }

    /**
     * Runs work that must run outside any transaction block, on a connection in auto-commit (a concurrent detach, a
     * session-level lock): a caller's transaction is suspended meanwhile, not joined and not nested.
     */
    public <T> T outsideTransactions(Supplier<T> work) {
        if (inTransaction()) {
            return QuarkusTransaction.suspendingExisting().call(work::get);
        }
        return work.get();
    }

    /**
     * @return {@link #transaction} and {@link #outsideTransactions} as {@link SqlSessions}: each call runs when its
     *         answer is subscribed to, on the subscriber's thread, and is answered before the subscription returns
     */
    SqlSessions sessions() {
        return new SqlSessions() {
            @Override
            public <T> Uni<T> inTransaction(Function<SqlCalls, Uni<T>> work, String failure) {
                return Uni.createFrom().item(() -> transaction(c -> JdbcCalls.answered(c, work),
                        failure));
            }

            @Override
            public <T> Uni<T> onConnection(Function<SqlCalls, Uni<T>> work, String failure) {
                return Uni.createFrom().item(() -> outsideTransactions(() -> connect(
                        c -> JdbcCalls.answered(c, work), failure)));
            }
        };
    }

    private boolean inTransaction() {
        try {
            return transactions.getStatus() != Status.STATUS_NO_TRANSACTION;
        } catch (SystemException e) {
            throw new IllegalStateException(e);
        }
    }
}
