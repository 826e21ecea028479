package io.quarkiverse.idempotency.benchmark;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.runtime.database.RecordStatements;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The reactive consumers: the same one insert, with Hibernate Reactive on the event loop; without idempotency, with the
 * extension, and with the extension's statement written by hand (the floor). And the same insert through the reactive
 * client without a transaction, on the event loop, without and with the extension (its lease mode there).
 */
@Singleton
public class ReactiveConsumers {

    private static final String INSERT = "INSERT INTO bench_reactive_row (consumer, payload) VALUES ($1, $2)";

    /** The reactive floor's statement, on the floors' table ({@link HandWritten#TABLE}) */
    private static final String CLAIM_IN_TRANSACTION = RecordStatements.claimInTransaction(HandWritten.TABLE);
    private static final long RETENTION = Duration.ofHours(24).toMillis();

    final AtomicLong plain = new AtomicLong();
    final AtomicLong idempotent = new AtomicLong();
    final AtomicLong handWritten = new AtomicLong();
    final AtomicLong plainEventLoop = new AtomicLong();
    final AtomicLong idempotentEventLoop = new AtomicLong();

    @Inject
    Pool client;

    /** No transaction, on the event loop: the insert through the reactive client commits by itself. */
    @Incoming("plain-eventloop")
    Uni<Void> plainEventLoop(String payload) {
        return insertOnItsOwn("plain-eventloop", payload).invoke(plainEventLoop::incrementAndGet);
    }

    /** The same with the extension: lease mode on the event loop, claim and confirm through the reactive client. */
    @Incoming("idempotent-eventloop")
    @Idempotent
    Uni<Void> idempotentEventLoop(String payload) {
        return insertOnItsOwn("idempotent-eventloop", payload).invoke(idempotentEventLoop::incrementAndGet);
    }

    private Uni<Void> insertOnItsOwn(String consumer, String payload) {
        return client.preparedQuery(INSERT).execute(Tuple.of(consumer, payload)).replaceWithVoid();
    }

    @Incoming("plain-reactive")
    @WithTransaction
    Uni<Void> plain(String payload) {
        return insert("plain-reactive", payload).invoke(plain::incrementAndGet);
    }

    /** The extension's default: the key written in the handler's reactive transaction. */
    @Incoming("idempotent-reactive")
    @Idempotent
    @WithTransaction
    Uni<Void> idempotent(String payload) {
        return insert("idempotent-reactive", payload).invoke(idempotent::incrementAndGet);
    }

    /**
     * The floor, by hand: the extension's guarded insert of the key through the session, then the row, in one reactive
     * transaction; the message acked after its commit.
     */
    @Incoming("hand-written-reactive")
    Uni<Void> handWritten(Message<String> message) {
        String id = "hand-reactive:" + message.getMetadata(IncomingRabbitMQMetadata.class)
                .flatMap(IncomingRabbitMQMetadata::getMessageId).orElseThrow();
        return Panache.withTransaction(() -> Panache.getSession()
                .chain(session -> session.createNativeQuery(CLAIM_IN_TRANSACTION).setParameter(1, id)
                        .setParameter(2, "hand").setParameter(3, "hand-written#1").setParameter(4, RETENTION)
                        .setParameter(5, id).setParameter(6, null).setParameter(7, id).executeUpdate())
                .chain(inserted -> inserted == 1
                        ? insert("hand-written-reactive", message.getPayload()).invoke(handWritten::incrementAndGet)
                        : Uni.createFrom().voidItem()))
                .chain(() -> Uni.createFrom().completionStage(message.ack()));
    }

    private static Uni<Void> insert(String consumer, String payload) {
        ReactiveBenchRow row = new ReactiveBenchRow();
        row.consumer = consumer;
        row.payload = payload;
        return row.persist().replaceWithVoid();
    }
}
