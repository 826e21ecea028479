package io.quarkiverse.idempotency;

/**
 * Thrown by {@link IdempotencyStore#confirmInTransaction} when the caller's transaction can no longer run a statement
 * because of what the handler did in it (on PostgreSQL: a statement of its own failed, and the handler caught the
 * error). The work cannot commit: the attempt failed, and it is counted like any other failed attempt, never taken for
 * a store outage.
 */
public class HandlerTransactionAbortedException extends RuntimeException {

    public HandlerTransactionAbortedException(String message, Throwable cause) {
        super(message, cause);
    }
}
