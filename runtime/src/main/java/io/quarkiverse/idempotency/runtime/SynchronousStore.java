package io.quarkiverse.idempotency.runtime;

/**
 * A store whose calls do all their work on the calling thread and answer before they return: no callback of theirs is
 * left to run later or on another thread (the database store over JDBC, the memory store). A delivery on a worker
 * thread over such a store settles each transition before its subscription returns, so it runs it without thread
 * contexts captured per operator ({@link SameThread}). A subclass must keep to it.
 */
public interface SynchronousStore {
}
