package io.quarkiverse.idempotency.benchmark;

import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * Three consumers doing the same work: a transaction inserting one row. Only the idempotency differs.
 */
@Singleton
public class Consumers {

    final AtomicLong plain = new AtomicLong();
    final AtomicLong idempotent = new AtomicLong();
    final AtomicLong inTransaction = new AtomicLong();

    @Incoming("plain")
    @Blocking(ordered = false)
    @Transactional
    void plain(String payload) {
        insert("plain", payload);
        plain.incrementAndGet();
    }

    @Incoming("idempotent")
    @Idempotent
    @Blocking(ordered = false)
    @Transactional
    void idempotent(String payload) {
        insert("idempotent", payload);
        idempotent.incrementAndGet();
    }

    @Incoming("in-transaction")
    @Idempotent(claimInTransaction = true)
    @Blocking(ordered = false)
    @Transactional
    void inTransaction(String payload) {
        insert("in-transaction", payload);
        inTransaction.incrementAndGet();
    }

    private static void insert(String consumer, String payload) {
        BenchRow row = new BenchRow();
        row.consumer = consumer;
        row.payload = payload;
        row.persist();
    }
}
