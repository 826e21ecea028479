package io.quarkiverse.idempotency.benchmark;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

/**
 * Consumers doing the same work: a transaction inserting one row. Only the idempotency differs: none, the extension's
 * two modes, and the same two modes' statements written by hand (the floor: what the contract itself costs).
 */
@Singleton
public class Consumers {

    final AtomicLong plain = new AtomicLong();
    final AtomicLong idempotent = new AtomicLong();
    final AtomicLong inTransaction = new AtomicLong();
    final AtomicLong handWritten = new AtomicLong();
    final AtomicLong handWrittenInTransaction = new AtomicLong();

    @Inject
    HandWritten hand;

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

    /** The default mode by hand: the claim commits on its own, then the work and the confirm in one transaction. */
    @Incoming("hand-written")
    @Blocking(ordered = false)
    CompletionStage<Void> handWritten(Message<String> message) {
        String id = "hand:" + messageId(message);
        if (hand.claim(id)) {
            QuarkusTransaction.requiringNew().run(() -> {
                insert("hand-written", message.getPayload());
                hand.confirm(id);
            });
            handWritten.incrementAndGet();
        }
        return message.ack();
    }

    /** The in-transaction mode by hand: the key inserted as confirmed, in the work's transaction. */
    @Incoming("hand-written-in-transaction")
    @Blocking(ordered = false)
    CompletionStage<Void> handWrittenInTransaction(Message<String> message) {
        String id = "hand:" + messageId(message);
        QuarkusTransaction.requiringNew().run(() -> {
            if (hand.insertConfirmed(id)) {
                insert("hand-written-in-transaction", message.getPayload());
                handWrittenInTransaction.incrementAndGet();
            }
        });
        return message.ack();
    }

    private static String messageId(Message<String> message) {
        return message.getMetadata(IncomingRabbitMQMetadata.class).flatMap(IncomingRabbitMQMetadata::getMessageId)
                .orElseThrow();
    }

    private static void insert(String consumer, String payload) {
        BenchRow row = new BenchRow();
        row.consumer = consumer;
        row.payload = payload;
        row.persist();
    }
}
