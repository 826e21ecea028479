package io.quarkiverse.idempotency.runtime;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.DeadLetterReplay;
import io.quarkiverse.idempotency.DeadLetterReplays;
import io.vertx.core.Context;

/**
 * Replays a channel's dead letters through its connector's {@link ConnectorReplays}, after checking the request: a
 * known channel, a limit in range, a worker thread.
 */
@Singleton
public class DeadLetterReplayer implements DeadLetterReplays {

    private final Instance<ConnectorReplays> connectors;
    private final IdempotentMethods methods;

    @Inject
    public DeadLetterReplayer(@Any Instance<ConnectorReplays> connectors, IdempotentMethods methods) {
        this.connectors = connectors;
        this.methods = methods;
    }

    @Override
    public DeadLetterReplay replay(String channel, String reason, int limit) {
        if (channel == null || !methods.channels().contains(channel)) {
            throw new IllegalArgumentException("No @Idempotent method consumes a channel named '" + channel + "'");
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be from 1 to " + MAX_LIMIT + ", not " + limit);
        }
        if (Context.isOnEventLoopThread()) {
            throw new IllegalStateException("A replay waits for the broker: call it on a worker thread, not on the"
                    + " event loop " + Thread.currentThread().getName());
        }
        for (ConnectorReplays connector : connectors) {
            if (connector.replays(channel)) {
                return connector.replay(channel, reason, limit);
            }
        }
        throw new UnsupportedOperationException("The dead letters of channel " + channel + " cannot be replayed: only"
                + " those of RabbitMQ and Kafka channels are, once their consumers started");
    }
}
