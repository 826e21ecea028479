package io.quarkiverse.idempotency.runtime.outbox;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkus.scheduler.Scheduled;

/**
 * The relay job: sends the outbox's messages that were not sent as their transaction committed. Registered at build
 * time only when the application injects an {@code OutboxEmitter}; {@code quarkus.idempotency.outbox.relay-every=off}
 * stops it at runtime.
 */
@Singleton
public class OutboxRelayJob {

    /** The job's identity in the Quarkus scheduler. */
    public static final String IDENTITY = "idempotency-outbox-relay";

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(OutboxRelayJob.class);

    @Inject
    Outbox outbox;

    @Scheduled(identity = IDENTITY, every = "${quarkus.idempotency.outbox.relay-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP, skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void relay() {
        try {
            outbox.relayDue();
            outbox.backlog();
        } catch (RuntimeException e) {
            LOG.outboxRelayFailed(e.getMessage());
        }
    }
}
