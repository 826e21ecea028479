package io.quarkiverse.idempotency.runtime.outbox;

import java.util.ArrayList;
import java.util.List;

import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * The messages a Hibernate Reactive handler's transaction sends through outboxes ({@code @Idempotent} and
 * {@code @WithTransaction}): kept on the message's Vert.x context while the handler runs, then written in its
 * transaction by {@link SessionOutbox} once it returned, before that transaction commits.
 */
final class PendingWrites {

    private static final String KEY = "io.quarkiverse.idempotency.outbox.pending";

    /** A message sent, as it will be written: its payload encoded already, so that a bad one fails the send. */
    record Pending(String messageId, String channel, String key, String kind, byte[] stored, Object payload) {
    }

    /** In the order sent. */
    private final List<Pending> messages = new ArrayList<>(2);
    private boolean closed;
    private final Context context;
    /** The writes of a handler this one runs within (an {@code @Idempotent} method calling another), taken back after. */
    private final PendingWrites outer;

    private PendingWrites(Context context, PendingWrites outer) {
        this.context = context;
        this.outer = outer;
    }

    /** @return the writes of the reactive transaction running on this context, or {@code null} when there is none */
    static PendingWrites current() {
        Context context = Vertx.currentContext();
        return context != null && VertxContext.isDuplicatedContext(context) ? context.getLocal(KEY) : null;
    }

    /**
     * Starts taking the messages sent on the current context, the message's.
     *
     * @throws IllegalStateException when it is not the (duplicated) context of a message
     */
    static PendingWrites open() {
        Context context = Vertx.currentContext();
        if (context == null || !VertxContext.isDuplicatedContext(context)) {
            throw new IllegalStateException("An @Idempotent @WithTransaction method runs on its message's Vert.x"
                    + " context, and this is none: its outbox messages could not be taken");
        }
        PendingWrites writes = new PendingWrites(context, context.getLocal(KEY));
        context.putLocal(KEY, writes);
        return writes;
    }

    /**
     * Takes a message; a blocking call the handler awaits may send too, on a worker thread of the same context.
     *
     * @throws IllegalStateException when the handler has returned already: the message would not be written
     */
    synchronized void add(Pending message) {
        if (closed) {
            throw new IllegalStateException("The @WithTransaction method that sent to outbox channel '"
                    + message.channel() + "' has returned: the message is not sent. Send it before the method's Uni"
                    + " completes");
        }
        messages.add(message);
    }

    /** @return the messages taken, in the order sent; none is taken after this */
    synchronized List<Pending> taken() {
        closed = true;
        return List.copyOf(messages);
    }

    /** Stops taking them, wherever it is called from: a send on the context after this is refused. */
    synchronized void close() {
        closed = true;
        if (context.getLocal(KEY) == this) {
            if (outer == null) {
                context.removeLocal(KEY);
            } else {
                context.putLocal(KEY, outer);
            }
        }
    }
}
