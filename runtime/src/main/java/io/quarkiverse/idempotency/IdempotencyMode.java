package io.quarkiverse.idempotency;

/**
 * Where an {@link Idempotent} method's key is written. The guide's "Modes" table says what each costs and guarantees.
 */
public enum IdempotencyMode {

    /**
     * {@link #IN_TRANSACTION} for a {@code @Transactional} method that takes a payload, returns synchronously and emits
     * nothing, when the store can join transactions (the database store); {@link #LEASE} for every other method.
     * Chosen per method when the application starts.
     */
    AUTO,

    /**
     * The key is written inside the method's own transaction, as confirmed: one commit per message, and "the work
     * committed" and "the key is a fact" are one event. Nothing is committed before the method runs, so a crash or a
     * rollback leaves nothing to take over: the redelivery runs at once. A concurrent delivery of the same key is told
     * the key is busy at once (it never waits on the other transaction) and is redelivered later. Needs a
     * {@code @Transactional} method and a store that joins transactions; the build fails otherwise.
     */
    IN_TRANSACTION,

    /**
     * The key is claimed before the method runs, in a commit of its own, on a lease that is renewed while the method
     * runs; it is confirmed after the method succeeds (inside the method's transaction when it has one). A crashed
     * consumer's claim is taken over once its lease runs out ({@code quarkus.idempotency.lease}). Costs two commits
     * per message. The mode of methods without a transaction; for a {@code @Transactional} method it is the choice
     * when its transaction cannot take the store's statements (its work is on another datasource).
     */
    LEASE
}
