package io.quarkiverse.idempotency.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

/**
 * Consumers doing the same work: inserting one row. Only the idempotency differs: none, the extension with its
 * defaults, its lease mode, and the statements of both modes written by hand (the floor: what the contract itself
 * costs); and, without a transaction around the work, none and the extension's default.
 */
@Singleton
public class Consumers {

    final AtomicLong plain = new AtomicLong();
    final AtomicLong idempotent = new AtomicLong();
    final AtomicLong lease = new AtomicLong();
    final AtomicLong handWritten = new AtomicLong();
    final AtomicLong handWrittenLease = new AtomicLong();
    final AtomicLong handWrittenFlush = new AtomicLong();
    final AtomicLong idempotentFlush = new AtomicLong();
    final AtomicLong plainNoTransaction = new AtomicLong();
    final AtomicLong idempotentNoTransaction = new AtomicLong();
    final AtomicLong recovered = new AtomicLong();
    final AtomicLong camel = new AtomicLong();
    final AtomicLong camelOrphanLock = new AtomicLong();
    final AtomicLong spring = new AtomicLong();
    final AtomicLong plainSend = new AtomicLong();
    /** The plain emitter's messages the connector took (written to RabbitMQ: no confirm on that channel). */
    final AtomicLong plainSent = new AtomicLong();
    final AtomicLong idempotentOutbox = new AtomicLong();

    /**
     * A plain emitter: the message leaves at once, whatever becomes of the transaction. Its buffer has no bound: the
     * consumer can outrun the connector's sending, and a bounded buffer then refuses sends (the handler fails, and its
     * message is dead-lettered), where the outbox's rows wait.
     */
    @Inject
    @Channel("sent-plain")
    @OnOverflow(OnOverflow.Strategy.UNBOUNDED_BUFFER)
    Emitter<String> sentPlain;

    /** The outbox: the message is written in the transaction and sent, with the broker's confirm, after its commit. */
    @Inject
    @Channel("sent-outbox")
    OutboxEmitter<String> sentOutbox;

    @Inject
    Peers peers;

    @Inject
    HandWritten hand;

    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "bench.recovery.latency", defaultValue = "300")
    long recoveryLatencyMillis;

    @Incoming("plain")
    @Blocking(ordered = false)
    @Transactional
    void plain(String payload) {
        insert("plain", payload);
        plain.incrementAndGet();
    }

    /** Inserts a row and sends a message with a plain emitter inside its transaction: the pipeline without a guarantee. */
    @Incoming("plain-send")
    @Blocking(ordered = false)
    @Transactional
    void plainSend(String payload) {
        insert("plain-send", payload);
        sentPlain.send(payload).thenRun(plainSent::incrementAndGet);
        plainSend.incrementAndGet();
    }

    /** The same pipeline, consume -> insert -> send, effectively once: @Idempotent and the outbox. */
    @Incoming("idempotent-outbox")
    @Idempotent
    @Blocking(ordered = false)
    @Transactional
    void idempotentOutbox(String payload) {
        insert("idempotent-outbox", payload);
        sentOutbox.send(payload);
        idempotentOutbox.incrementAndGet();
    }

    /** The extension with its defaults: a @Transactional handler, so the key is written in its transaction. */
    @Incoming("idempotent")
    @Idempotent
    @Blocking(ordered = false)
    @Transactional
    void idempotent(String payload) {
        insert("idempotent", payload);
        idempotent.incrementAndGet();
    }

    /**
     * The extension's default mode with {@code asynchronous-commit} on its channel: the transaction commits without
     * waiting for its WAL flush, the message is acked once a shared flush has passed it.
     */
    @Incoming("idempotent-flush")
    @Idempotent
    @Blocking(ordered = false)
    @Transactional
    void idempotentFlush(String payload) {
        insert("idempotent-flush", payload);
        idempotentFlush.incrementAndGet();
    }

    /** The lease mode on the same handler: the claim commits on its own first, the confirm in the transaction. */
    @Incoming("lease")
    @Idempotent(mode = IdempotencyMode.LEASE)
    @Blocking(ordered = false)
    @Transactional
    void lease(String payload) {
        insert("lease", payload);
        lease.incrementAndGet();
    }

    /**
     * The default mode by hand: the guarded insert of the key, in the work's transaction; the handler as the extension's
     * consumer has it (a {@code @Transactional} method, acked once it returned), so that only the idempotency differs.
     */
    @Incoming("hand-written")
    @Blocking(ordered = false)
    @Transactional
    void handWritten(String payload, IncomingRabbitMQMetadata metadata) {
        if (hand.claimInTransaction("hand:" + metadata.getMessageId().orElseThrow())) {
            insert("hand-written", payload);
            handWritten.incrementAndGet();
        }
    }

    /**
     * The experiment of an ack after the WAL flush, by hand: the default mode's statements in a transaction that commits
     * asynchronously (it returns before its WAL is flushed), then the message acked only once a flush shared by the
     * deliveries waiting at once has passed that commit and seen the key confirmed. A database crash may lose the
     * commit, and a flush on the restarted server succeeds all the same: only the key's row tells whether the work is
     * durable, so the flush reads it, as the contract requires of any consumer (an ack never before the outcome that
     * justifies it is durable). A lost commit is not acked: the message comes back and runs again.
     */
    @Incoming("hand-written-flush")
    @Blocking(ordered = false)
    CompletionStage<Void> handWrittenFlush(Message<String> message) {
        String id = "hand-flush:" + messageId(message);
        QuarkusTransaction.requiringNew().run(() -> {
            if (hand.claimInTransaction(id, true)) {
                insert("hand-written-flush", message.getPayload());
            }
        });
        if (!hand.awaitConfirmedDurably(id)) {
            throw new IllegalStateException("The commit of key " + id + " was lost");
        }
        handWrittenFlush.incrementAndGet();
        return message.ack();
    }

    /** The lease mode by hand: the claim commits on its own, then the work and the confirm in one transaction. */
    @Incoming("hand-written-lease")
    @Blocking(ordered = false)
    CompletionStage<Void> handWrittenLease(Message<String> message) {
        String id = "hand-lease:" + messageId(message);
        if (hand.claim(id)) {
            QuarkusTransaction.requiringNew().run(() -> {
                insert("hand-written-lease", message.getPayload());
                hand.confirm(id);
            });
            handWrittenLease.incrementAndGet();
        }
        return message.ack();
    }

    /**
     * Apache Camel's JdbcMessageIdRepository as its idempotent consumer drives it (eager): add the id before the work, in
     * a transaction of its own; confirm after it (a no-op for this repository); remove it when the work fails.
     */
    @Incoming("camel-jdbc")
    @Blocking(ordered = false)
    CompletionStage<Void> camel(Message<String> message) {
        String id = messageId(message);
        if (!peers.camel.add(id)) {
            return message.ack(); // a duplicate, skipped
        }
        try {
            QuarkusTransaction.requiringNew().run(() -> insert("camel-jdbc", message.getPayload()));
            peers.camel.confirm(id);
        } catch (RuntimeException e) {
            peers.camel.remove(id);
            return message.nack(e);
        }
        camel.incrementAndGet();
        return message.ack();
    }

    /** Camel's JdbcOrphanLockAwareIdempotentRepository, driven the same way. */
    @Incoming("camel-orphan-lock")
    @Blocking(ordered = false)
    CompletionStage<Void> camelOrphanLock(Message<String> message) {
        String id = messageId(message);
        if (!peers.camelOrphanLock.add(id)) {
            return message.ack();
        }
        try {
            QuarkusTransaction.requiringNew().run(() -> insert("camel-orphan-lock", message.getPayload()));
            peers.camelOrphanLock.confirm(id);
        } catch (RuntimeException e) {
            peers.camelOrphanLock.remove(id);
            return message.nack(e);
        }
        camelOrphanLock.incrementAndGet();
        return message.ack();
    }

    /**
     * Spring Integration's idempotent receiver: the message's key put into its JdbcMetadataStore with putIfAbsent,
     * inside the work's transaction as its documentation asks; a key already there is a duplicate. The handler as the
     * extension's consumer has it: a {@code @Transactional} method, acked once it returned.
     */
    @Incoming("spring-metadata")
    @Blocking(ordered = false)
    @Transactional
    void spring(String payload, IncomingRabbitMQMetadata metadata) {
        if (peers.spring.putIfAbsent(metadata.getMessageId().orElseThrow(), "1") == null) {
            insert("spring-metadata", payload);
            spring.incrementAndGet();
        }
    }

    /** No transaction around the work: its insert commits by itself. */
    @Incoming("plain-nontx")
    @Blocking(ordered = false)
    void plainNoTransaction(String payload) {
        insertOnItsOwn("plain-nontx", payload);
        plainNoTransaction.incrementAndGet();
    }

    /** The extension's default on a handler without a transaction: the lease mode, claim and confirm around it. */
    @Incoming("idempotent-nontx")
    @Idempotent
    @Blocking(ordered = false)
    void idempotentNoTransaction(String payload) {
        insertOnItsOwn("idempotent-nontx", payload);
        idempotentNoTransaction.incrementAndGet();
    }

    /** The consumer the recovery measurement kills and restarts: defaults, and a handler that takes a while. */
    @Incoming("recovery")
    @Idempotent
    @Blocking(ordered = false)
    @Transactional
    void recovery(String payload) throws InterruptedException {
        Thread.sleep(recoveryLatencyMillis); // the work in flight when the process is killed
        insert("recovery", payload);
        recovered.incrementAndGet();
    }

    /** The same, without a transaction: the lease mode, whose claims a killed process leaves behind. */
    @Incoming("recovery-nontx")
    @Idempotent
    @Blocking(ordered = false)
    void recoveryNoTransaction(String payload) throws InterruptedException {
        Thread.sleep(recoveryLatencyMillis);
        insertOnItsOwn("recovery-nontx", payload);
        recovered.incrementAndGet();
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

    private void insertOnItsOwn(String consumer, String payload) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO bench_row (consumer, payload) VALUES (?, ?)")) {
            ps.setString(1, consumer);
            ps.setString(2, payload);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
