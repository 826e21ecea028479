package io.quarkiverse.idempotency.runtime.database;

import java.sql.Connection;
import java.sql.SQLException;

import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

import io.quarkiverse.idempotency.HandlerTransactionAbortedException;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * A handler's transaction that PostgreSQL aborted under it: a statement of the handler's failed and the handler caught
 * the error. Every later statement fails ({@code 25P02}), and the COMMIT is answered with a rollback that the driver does
 * not report, so a transaction manager would call it committed.
 */
final class AbortedTransactions {

    /** PostgreSQL: the transaction is aborted; commands are ignored until its end. */
    private static final String IN_FAILED_TRANSACTION = "25P02";

    private AbortedTransactions() {
    }

    /** @return whether the connection's transaction is aborted, as the server said with its last answer (no round trip) */
    static boolean aborted(Connection connection) throws SQLException {
        return connection.isWrapperFor(BaseConnection.class)
                && connection.unwrap(BaseConnection.class).getTransactionState() == TransactionState.FAILED;
    }

    /**
     * @return whether a statement failed because its transaction was aborted: PostgreSQL's {@code 25P02}, through JDBC
     *         or the reactive client, anywhere in the failure's causes
     */
    static boolean inFailedTransaction(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && IN_FAILED_TRANSACTION.equals(sql.getSQLState())
                    || String.valueOf(t.getMessage()).contains(IN_FAILED_TRANSACTION)) {
                return true;
            }
        }
        return false;
    }

    static HandlerTransactionAbortedException of(ScopedKey key, Throwable cause) {
        return new HandlerTransactionAbortedException("The transaction of the handler of key '" + key + "' was aborted"
                + " by a statement of its own that failed (" + (cause == null ? "and was caught" : cause.getMessage())
                + "): its work and its key cannot commit", cause);
    }
}
