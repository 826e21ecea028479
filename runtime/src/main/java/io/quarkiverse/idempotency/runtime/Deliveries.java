package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.KeyMissingException;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkus.runtime.ShutdownEvent;
import io.vertx.core.Vertx;

/**
 * Starts {@link Delivery deliveries}: computes each message's key and hands the delivery what its transitions need
 * (the store, the lease renewer, the metrics, the confirmed-keys cache, bounded logs). Shared by the interceptors, the
 * programmatic form and the connectors' failure handlers.
 */
@Singleton
public class Deliveries {

    /** The category of every delivery's outcome log. */
    static final Logger LOG = Logger.getLogger("io.quarkiverse.idempotency.delivery");

    final IdempotencyStore store;
    final IdempotencyMetrics metrics;
    final ConfirmedKeys confirmedKeys;
    final LeaseRenewer renewer;
    final LogThrottle logs = new LogThrottle(10, TimeUnit.SECONDS, 5);
    private final MessageIdKey messageIds;
    private final Duration requeueDelay;
    private final String worker;
    private final AtomicLong claims = new AtomicLong();
    private volatile boolean stopping;

    @Inject
    public Deliveries(IdempotencyStore store, IdempotentMethods methods, MessageIdKey messageIds,
            IdempotencyMetrics metrics, IdempotencyConfig config, WorkerId worker, Vertx vertx) {
        this.store = store;
        this.messageIds = messageIds;
        this.metrics = metrics;
        this.requeueDelay = config.requeueDelay();
        this.worker = worker.value();
        // The memory store answers as fast as the cache would, and tests clear it between cases: no cache in front.
        this.confirmedKeys = config.confirmedKeysCacheSize() > 0 && !(store instanceof InMemoryIdempotencyStore)
                ? new ConfirmedKeys(config.confirmedKeysCacheSize())
                : null;
        this.renewer = new LeaseRenewer(store, vertx, methods.shortestLease());
    }

    /**
     * Computes the key of a message and starts its delivery; a key this process confirmed makes it a duplicate at
     * once.
     *
     * @param plan the method's plan
     * @param channel the channel that delivered the message (the default scope)
     * @param payload the payload the method receives
     * @param metadata the message's metadata
     * @throws KeyMissingException when the key function finds no key, or fails
     */
    public Delivery start(MethodPlan plan, String channel, Object payload, Metadata metadata) {
        ScopedKey key = keyOf(plan, channel, payload, metadata);
        Delivery delivery = new Delivery(this, plan, channel, key, metadata);
        if (confirmedKeys != null && confirmedKeys.contains(key)) {
            delivery.confirmedEarlier();
        }
        return delivery;
    }

    /** @return a token for one claim, unique to it: this process's worker id and a sequence number */
    String newToken() {
        return worker + "#" + Long.toString(claims.incrementAndGet(), 36);
    }

    /** @return this process's worker id: the owner recorded on keys written in a transaction (they need no fence) */
    String worker() {
        return worker;
    }

    /** @return the broker's message id, or {@code null} */
    public String messageId(Metadata metadata) {
        return messageIds.key(null, metadata);
    }

    /** @return how long a message waits before it is redelivered when its key is busy or the store failed */
    public Duration requeueDelay() {
        return requeueDelay;
    }

    /**
     * Waits, on the calling (worker) thread, before a delivery is retried in place.
     *
     * @return {@code false} when the application began to stop meanwhile (or the thread was interrupted): the
     *         delivery must not be retried
     */
    public boolean awaitRetry(Duration delay) {
        long end = System.nanoTime() + delay.toNanos();
        while (!stopping) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                return true;
            }
            LockSupport.parkNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
            if (Thread.currentThread().isInterrupted()) {
                return false;
            }
        }
        return false;
    }

    void stopping(@Observes ShutdownEvent event) {
        stopping = true;
    }

    /** Counts a delivery whose payload could not be converted for its method, and logs it (bounded). */
    public void unreadable(String channel, Metadata metadata, Throwable cause) {
        metrics.delivery(channel, Outcome.UNREADABLE);
        String suffix = logs.admit("unreadable:" + channel);
        if (suffix != null) {
            LOG.errorf("Dead-lettered message %s of channel %s at once: its payload could not be converted for the"
                    + " @Idempotent method (%s); retrying cannot help%s", describeId(metadata), channel, cause, suffix);
        }
    }

    String describeId(Metadata metadata) {
        String id = messageId(metadata);
        return id == null ? "without a message id" : "'" + id + "'";
    }

    private ScopedKey keyOf(MethodPlan plan, String channel, Object payload, Metadata metadata) {
        String scope = plan.scope() != null ? plan.scope() : channel;
        String key;
        try {
            key = plan.keyFunction().key(payload, metadata);
        } catch (RuntimeException e) {
            throw keyMissing(plan, channel, metadata, "its key function failed: " + e, e);
        }
        if (key == null || key.isBlank()) {
            throw keyMissing(plan, channel, metadata, "its key function found no key", null);
        }
        return new ScopedKey(scope, key);
    }

    private KeyMissingException keyMissing(MethodPlan plan, String channel, Metadata metadata, String why,
            Throwable cause) {
        metrics.delivery(channel, Outcome.KEY_MISSING);
        String message = "Rejecting message " + describeId(metadata) + " of " + plan.description() + ": " + why
                + "; it is dead-lettered, not retried";
        String suffix = logs.admit("key-missing:" + channel);
        if (suffix != null) {
            LOG.warn(message + suffix);
        }
        return new KeyMissingException(message, cause);
    }

    @PreDestroy
    void close() {
        renewer.close();
    }
}
