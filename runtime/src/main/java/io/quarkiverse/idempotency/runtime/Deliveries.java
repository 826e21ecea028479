package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.KeyMissingException;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.OutputNotAcknowledgedException;
import io.quarkiverse.idempotency.PayloadMismatchException;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkus.arc.All;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;

/**
 * Starts {@link Delivery deliveries}: computes each message's key and hands the delivery what every delivery shares
 * (its {@link DeliveryContext}). Shared by the interceptors, the programmatic form and the connectors' failure
 * handlers.
 */
@Singleton
public class Deliveries {

    private final DeliveryContext context;
    private final DeliveryReport report;
    private final MessageIdKey messageIds;
    private final List<ConnectorSupport> connectors;
    private final KeyForms keyForms;
    private final Vertx vertx;
    private final Duration outputAckTimeout;
    private volatile boolean stopping;

    @Inject
    public Deliveries(IdempotencyStore store, IdempotentMethods methods, MessageIdKey messageIds,
            IdempotencyMetrics metrics, DeliveryTracing tracing, IdempotencyConfig config, WorkerId worker,
            Vertx vertx, @All List<ConnectorSupport> connectors, NonBlockingStore nonBlocking) {
        this.report = new DeliveryReport(metrics, tracing, messageIds,
                LaunchMode.current() == LaunchMode.DEVELOPMENT ? new OutcomeHistory() : null);
        this.messageIds = messageIds;
        this.connectors = List.copyOf(connectors);
        Map<String, KeyStorage> storages = new java.util.HashMap<>();
        config.channels().forEach((channel, settings) -> settings.keyStorage().ifPresent(s -> storages.put(channel, s)));
        this.keyForms = new KeyForms(config.keyStorage(), storages, config.keyDigestSecret().orElse(null),
                config.keyStorageChangedAt().orElse(null));
        if (keyForms.changing() && !store.peeks()) {
            throw new IllegalStateException("quarkus.idempotency.key-storage-changed-at is set, but the idempotency"
                    + " store " + store.getClass().getName() + " cannot look a key up without claiming it"
                    + " (IdempotencyStore.peek): keys written before the change could not be found. Remove the setting,"
                    + " or use the database store");
        }
        this.vertx = vertx;
        this.outputAckTimeout = config.outputAckTimeout();
        // The memory store answers as fast as the cache would, and tests clear it between cases: no cache in front.
        ConfirmedKeys confirmedKeys = config.confirmedKeysCacheSize() > 0 && !store.neverBlocks()
                ? new ConfirmedKeys(config.confirmedKeysCacheSize())
                : null;
        this.context = new DeliveryContext(store, report, new LeaseRenewer(store, vertx, methods.shortestLease()),
                confirmedKeys, new ClaimTokens(worker.value()), config.requeueDelay(), new LocalHolders(), nonBlocking);
    }

    /**
     * Computes the key of a message and starts its delivery; a key this process confirmed makes it a duplicate at
     * once.
     *
     * @param plan the method's plan
     * @param channel the channel that delivered the message (the default scope)
     * @param payload the payload the method receives
     * @param message the message as its connector produced it
     * @throws KeyMissingException when the key function finds no key, or fails
     * @throws PayloadMismatchException when this process confirmed the key for a different payload and such
     *         duplicates are dead-lettered
     */
    public Delivery start(MethodPlan plan, String channel, Object payload, Message<?> message) {
        Metadata metadata = message.getMetadata();
        ScopedKey readable = keyOf(plan, channel, payload, metadata);
        DeliveryPolicy policy = plan.policy(channel);
        KeyForms.Forms forms = keyForms.forms(channel, readable, policy.retention());
        ScopedKey key = forms.stored();
        Delivery delivery = new Delivery(context, context.calls(io.vertx.core.Context.isOnEventLoopThread()), plan,
                channel, key, metadata, arrival(policy, payload, message, metadata),
                forms.previous());
        if (plan.outboxChannel() != null) {
            delivery.outputKey(keyForms.identity(readable));
        }
        ConfirmedKeys.Confirmed confirmed = context.confirmedKeys() == null ? null : context.confirmedKeys().get(key);
        if (confirmed != null) {
            delivery.confirmedEarlier(confirmed.facts(), confirmed.age());
        }
        return delivery;
    }

    // The message's id, and its payload's fingerprint: from the body the broker delivered when its connector keeps it
    // (the exact bytes), else from the payload the method receives.
    private Arrival arrival(DeliveryPolicy policy, Object payload, Message<?> message, Metadata metadata) {
        String fingerprint = null;
        if (policy.fingerprints()) {
            for (ConnectorSupport connector : connectors) {
                byte[] body = connector.body(message);
                if (body != null) {
                    fingerprint = Fingerprints.of(body);
                    break;
                }
            }
            if (fingerprint == null) {
                fingerprint = Fingerprints.of(payload);
            }
        }
        return new Arrival(MessageFacts.of(messageIds.key(null, metadata), fingerprint), message, connectors);
    }

    /** @return the outcomes of the last hour, minute by minute, in dev mode (the Dev UI charts them); else {@code null} */
    public OutcomeHistory history() {
        return report.history();
    }

    /** @return each channel's oldest duplicate so far, against its retention (the Dev UI shows it) */
    public Map<String, DuplicateAges.Oldest> oldestDuplicates() {
        return report.oldestDuplicates();
    }

    /** @return how long a message waits before it is redelivered when its key is busy or the store failed */
    public Duration requeueDelay() {
        return context.requeueDelay();
    }

    /** @return whether the application began to stop: a delivery waiting to be retried in place is let go */
    public boolean stopping() {
        return stopping;
    }

    /**
     * A processor returned: once its output is acknowledged downstream its input is acknowledged (and its key
     * confirmed). If that takes longer than {@code output-ack-timeout}, the attempt fails and the input is nacked.
     */
    void awaitOutput(InboundMessage inbound, Delivery delivery) {
        vertx.setTimer(outputAckTimeout.toMillis(), id -> {
            if (delivery.state() == DeliveryState.AWAITING_OUTPUT_ACK && inbound.settle()) {
                delivery.failed(new OutputNotAcknowledgedException(outputAckTimeout)).subscribe()
                        .with(outcome -> inbound.message().nack(outcome));
            }
        });
    }

    /** Created at startup, so that a key storage it cannot honour stops the application there. */
    void started(@Observes StartupEvent event) {
    }

    void stopping(@Observes ShutdownEvent event) {
        stopping = true;
    }

    /** Counts a delivery whose payload could not be converted for its method, and logs it (bounded). */
    public void unreadable(String channel, Metadata metadata, Throwable cause) {
        report.unreadable(channel, metadata, cause);
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
        String message = "Rejecting message " + report.describeId(metadata) + " of " + plan.description() + ": " + why
                + "; it is dead-lettered, not retried";
        report.keyMissing(channel, metadata, message, cause);
        return new KeyMissingException(message, cause);
    }

    @PreDestroy
    void close() {
        context.renewer().close();
    }
}
