package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Counts and logs what deliveries report, and the messages that never became one: the one place where outcomes meet
 * the metrics and the log. Logs of outcomes that can come in storms (retries, dead letters, store failures, missing
 * keys, unreadable payloads) are bounded per kind; a duplicate or a busy key is logged at debug level only.
 */
final class DeliveryReport implements DeliveryListener {

    /** The category of every delivery's outcome log. */
    static final IdempotencyLogger LOG = IdempotencyLogger.of("io.quarkiverse.idempotency.delivery");

    private final IdempotencyMetrics metrics;
    private final DeliveryTracing tracing;
    private final MessageIdKey messageIds;
    private static final int MISMATCHES_REMEMBERED = 10_000;

    private final LogThrottle logs = new LogThrottle(10, TimeUnit.SECONDS, 5);
    private final DuplicateAges ages = new DuplicateAges();
    /** The keys whose payload mismatch was logged: each once (bounded: forgotten all at once past its size). */
    private final Set<ScopedKey> mismatchesLogged = ConcurrentHashMap.newKeySet();

    /** The outcomes of the last hour, for the Dev UI; {@code null} outside dev mode. */
    private final OutcomeHistory history;

    DeliveryReport(IdempotencyMetrics metrics, DeliveryTracing tracing, MessageIdKey messageIds,
            OutcomeHistory history) {
        this.metrics = metrics;
        this.tracing = tracing;
        this.messageIds = messageIds;
        this.history = history;
    }

    /** @return the outcomes of the last hour, or {@code null} outside dev mode */
    OutcomeHistory history() {
        return history;
    }

    @Override
    public void claimAnswered(DeliveryView delivery, long nanos) {
        metrics.claimLatency(delivery.target().channel(), nanos);
    }

    @Override
    public void tookOver(DeliveryView delivery) {
        metrics.takeover(delivery.target().channel());
        metrics.duplicate(delivery.target().channel(), DuplicateOrigin.TAKEOVER, PayloadMatch.UNKNOWN);
        if (history != null) {
            history.count(OutcomeHistory.Series.TAKEOVER);
        }
        LOG.tookOver(delivery.key(), delivery.target().plan().description());
    }

    @Override
    public void duplicate(DeliveryView delivery, DuplicateOrigin origin, PayloadMatch payload, Duration age,
            MessageFacts seen) {
        String channel = delivery.target().channel();
        metrics.duplicate(channel, origin, payload);
        if (history != null) {
            history.count(OutcomeHistory.Series.of(origin));
        }
        if (age != null) {
            metrics.duplicateAge(channel, origin, age.toMillis());
            Duration retention = delivery.target().policy().retention();
            if (ages.observe(channel, age, retention)) {
                LOG.lateDuplicate(delivery.key(), delivery.target().plan().description(), age, retention, channel);
            }
        }
        if (payload == PayloadMatch.MISMATCH && delivery.target().policy().payloadMismatch() == PayloadMismatch.WARN) {
            if (mismatchesLogged.size() >= MISMATCHES_REMEMBERED) {
                mismatchesLogged.clear();
            }
            if (mismatchesLogged.add(delivery.key())) {
                LOG.payloadMismatchAcked(describeId(delivery.target().metadata()), delivery.key(),
                        delivery.target().plan().description(),
                        seen.messageId() == null ? "(no id)" : "'" + seen.messageId() + "'");
            }
        }
    }

    /** @return each channel's oldest duplicate so far, against its retention */
    Map<String, DuplicateAges.Oldest> oldestDuplicates() {
        return ages.oldest();
    }

    @Override
    public void ended(DeliveryView delivery, Throwable cause) {
        DeliveryState state = delivery.state();
        if (state.outcome() != null) {
            metrics.delivery(delivery.target().channel(), state.outcome());
            tracing.ended(delivery, cause);
        }
        if (history != null) {
            switch (state) {
                case HANDLED, UNCONFIRMED -> history.count(OutcomeHistory.Series.HANDLED);
                case BUSY -> history.count(OutcomeHistory.Series.BUSY);
                case RETRYING -> history.count(OutcomeHistory.Series.RETRIED);
                case DEAD_LETTERED, PAYLOAD_MISMATCH -> history.count(OutcomeHistory.Series.DEAD_LETTERED);
                default -> {
                    // duplicates are counted by origin when reported; the rest is not charted
                }
            }
        }
        String method = delivery.target().plan().description();
        switch (state) {
            case DUPLICATE -> LOG.debugf("Key '%s' of %s was handled before: acknowledged without running",
                    delivery.key(), method);
            case PAYLOAD_MISMATCH -> {
                String suffix = logs.admit("payload-mismatch:" + method);
                if (suffix != null) {
                    LOG.payloadMismatchDeadLettered(delivery.answer().getMessage(), suffix);
                }
            }
            case BUSY -> LOG.debugf("Key '%s' of %s is being handled by another delivery; redelivering later",
                    delivery.key(), method);
            case UNCONFIRMED -> LOG.unconfirmed(cause, delivery.key(), method);
            case CLAIM_LOST -> {
                if (delivery.answer() == null) {
                    LOG.claimLost(delivery.key(), method);
                }
            }
            case RETRYING -> {
                HandlerFailedException retry = (HandlerFailedException) delivery.answer();
                String suffix = logs.admit("retried:" + method);
                if (suffix != null) {
                    LOG.attemptFailed(retry.attempt(), retry.maxAttempts(), method, delivery.key(), cause,
                            retry.retryDelay().toMillis(), suffix);
                }
                LOG.debugf(cause, "Attempt %d of key '%s' failed", retry.attempt(), delivery.key());
            }
            case DEAD_LETTERED -> {
                String suffix = logs.admit("dead-lettered:" + method);
                if (suffix != null && cause instanceof RecordedFailure before) {
                    LOG.deadLetteredBefore(delivery.key(), method, describeId(delivery.target().metadata()), before,
                            suffix);
                } else if (suffix != null) {
                    AttemptsExhaustedException spent = (AttemptsExhaustedException) delivery.answer();
                    LOG.attemptsExhausted(cause, spent.attempts(), delivery.target().policy().retry().maxAttempts(), method,
                            delivery.key(), describeId(delivery.target().metadata()), suffix);
                }
            }
            case STORE_FAILED -> {
                String suffix = logs.admit("store-failed");
                if (suffix != null) {
                    LOG.storeFailed(delivery.answer().getMessage(), method, suffix);
                }
            }
            default -> {
            }
        }
    }

    /** Counts and logs (bounded) a message whose key could not be computed: it is dead-lettered. */
    void keyMissing(String channel, Metadata metadata, String message, Throwable cause) {
        metrics.delivery(channel, Outcome.KEY_MISSING);
        tracing.rejected(channel, Outcome.KEY_MISSING, metadata, message, cause);
        String suffix = logs.admit("key-missing:" + channel);
        if (suffix != null) {
            LOG.keyMissing(message, suffix);
        }
    }

    /** Counts and logs (bounded) a message whose payload could not be converted for its method. */
    void unreadable(String channel, Metadata metadata, Throwable cause) {
        metrics.delivery(channel, Outcome.UNREADABLE);
        tracing.rejected(channel, Outcome.UNREADABLE, metadata, String.valueOf(cause), cause);
        String suffix = logs.admit("unreadable:" + channel);
        if (suffix != null) {
            LOG.unreadable(describeId(metadata), channel, cause, suffix);
        }
    }

    /** @return the message id, quoted, for a log line */
    String describeId(Metadata metadata) {
        String id = messageIds.key(null, metadata);
        return id == null ? "without a message id" : "'" + id + "'";
    }
}
