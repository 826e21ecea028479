package io.quarkiverse.idempotency.runtime.database;

/**
 * A store whose keys live in the extension's PostgreSQL table, which the statements of {@link RecordStatements} reach
 * from anywhere: a Hibernate Reactive handler's session ({@link SessionKeys}) and the reactive client's pool
 * ({@link PoolKeys}), whether the store itself talks JDBC ({@link DatabaseIdempotencyStore}) or the reactive client
 * ({@link PoolIdempotencyStore}).
 */
public interface SqlKeyStore {

    /** @return the statements of the store's (unpartitioned) table */
    RecordStatements statements();

    /** @return why keys cannot be written through a reactive session or pool now, or {@code null} when they can */
    String sessionRefusal();

    /** @return the most lease-mode claims (and, apart, confirms) that share one statement; 1: each on its own */
    int leaseBatchSize();
}
