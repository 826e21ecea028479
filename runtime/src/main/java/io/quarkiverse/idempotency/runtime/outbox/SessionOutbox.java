package io.quarkiverse.idempotency.runtime.outbox;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import io.quarkiverse.idempotency.runtime.database.SqlCalls;
import io.smallrye.mutiny.Uni;

/**
 * The outbox in a Hibernate Reactive handler's transaction ({@code @Idempotent @WithTransaction}): what the handler
 * sends while it runs is written through the session of its transaction once it returned, so the work, the key and
 * the messages are one commit; the messages are sent once that transaction committed, as a JTA transaction's are.
 * Nothing here blocks.
 */
public final class SessionOutbox {

    private final Outbox outbox;

    public SessionOutbox(Outbox outbox) {
        this.outbox = outbox;
    }

    /**
     * Runs a handler, taking what it sends through outboxes, and writes that in its transaction after it returned.
     *
     * @param handler the handler's attempt, on the message's (duplicated) context
     * @param session the statements of the handler's transaction, through its session
     * @param afterCommit told what to run once the transaction committed (it sends the messages written), when the
     *        handler sent any
     */
    public <T> Uni<T> around(Supplier<Uni<T>> handler, SqlCalls session,
            Consumer<Runnable> afterCommit) {
        return around(writes -> handler.get(), session, afterCommit);
    }

    /**
     * {@link #around} of a {@code @ThroughOutbox} processor: the item its handler returns is its output, taken as a
     * message of its channel (whichever thread the item comes on), and the attempt's item is {@code null}, so that
     * SmallRye forwards nothing.
     *
     * @param channel the processor's {@code @Outgoing} channel
     * @param messageId the output's id ({@link Outbox#outputId})
     */
    public Uni<Object> aroundOutput(Supplier<Uni<Object>> handler, String channel, String messageId, SqlCalls session,
            Consumer<Runnable> afterCommit) {
        return around(writes -> handler.get().invoke(output -> outbox.writeOutput(channel, output, messageId, writes))
                .replaceWithNull(), session, afterCommit);
    }

    private <T> Uni<T> around(Function<PendingWrites, Uni<T>> handler, SqlCalls session,
            Consumer<Runnable> afterCommit) {
        PendingWrites writes = PendingWrites.open();
        Uni<T> attempt;
        try {
            attempt = handler.apply(writes);
        } catch (RuntimeException e) {
            writes.close();
            throw e;
        }
        // closed however it ends: with its item, a failure (rolled back, and what it sent with it) or a cancellation
        return attempt.onTermination().invoke(writes::close).onItem().transformToUni(item -> {
            List<PendingWrites.Pending> sent = writes.taken();
            if (sent.isEmpty()) {
                return Uni.createFrom().item(item);
            }
            return write(sent, session).map(send -> {
                afterCommit.accept(send);
                return item;
            });
        });
    }

    // One statement after the other, in the order the handler sent them (their ids keep that order for the relay).
    private Uni<Runnable> write(List<PendingWrites.Pending> messages, SqlCalls session) {
        Outbox.AfterCommit transaction = outbox.reactiveTransaction();
        Uni<Void> done = Uni.createFrom().voidItem();
        for (PendingWrites.Pending message : messages) {
            done = done.chain(() -> insert(session, message).invoke(written -> transaction.written(written,
                    message.messageId(), message.channel(), message.key(), message.payload()))).replaceWithVoid();
        }
        return done.map(ignored -> transaction::committed);
    }

    private Uni<OutboxTable.Written> insert(SqlCalls session, PendingWrites.Pending message) {
        return outbox.table().insert(session, message.messageId(), message.channel(), message.key(), message.kind(),
                message.stored(), outbox.owner(), outbox.settings().lease());
    }
}
