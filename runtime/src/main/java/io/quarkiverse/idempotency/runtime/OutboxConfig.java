package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.smallrye.config.WithDefault;

/**
 * The transactional outbox: messages sent through an {@code OutboxEmitter} are written in the sender's
 * transaction, sent just after it commits, and relayed by a job when they could not be.
 */
public interface OutboxConfig {

    /**
     * How long a message's sending is reserved for one instance: the one that wrote it (it sends it just after
     * the commit), then the relay that claims it. Another instance relays it only once this has run out, so it
     * bounds how late a message whose writer died is sent, and must outlast a broker's confirm.
     */
    @WithDefault("30s")
    Duration lease();

    /**
     * How often the relay job looks for messages left unsent (their writer died, the broker refused them or did
     * not answer), as a duration or {@code off}. Messages are sent as their transaction commits; the job is the
     * safety net. Each run also renews the leases of the messages waiting for their broker's confirm, so it is at most a
     * quarter of the lease (a longer period is refused at startup).
     */
    @WithDefault("5s")
    String relayEvery();

    /** The most messages the relay claims in one statement, and the most sent rows deleted in one. */
    @WithDefault("500")
    int batchSize();

    /** The delay before a refused message is sent again, doubled per failed sending. */
    @WithDefault("1s")
    Duration retryInitialDelay();

    /** The longest delay between two sendings of a refused message: it is retried at this pace, never dropped. */
    @WithDefault("5m")
    Duration retryMaxDelay();

    /**
     * The readiness check reports the outbox down when its oldest message has waited longer than this (the broker
     * refuses them, or no relay runs).
     */
    @WithDefault("5m")
    Duration readyWithin();
}
