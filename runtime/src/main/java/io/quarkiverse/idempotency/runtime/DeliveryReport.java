package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

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
    static final Logger LOG = Logger.getLogger("io.quarkiverse.idempotency.delivery");

    private final IdempotencyMetrics metrics;
    private final MessageIdKey messageIds;
    private static final int MISMATCHES_REMEMBERED = 10_000;

    private final LogThrottle logs = new LogThrottle(10, TimeUnit.SECONDS, 5);
    private final DuplicateAges ages = new DuplicateAges();
    /** The keys whose payload mismatch was logged: each once (bounded: forgotten all at once past its size). */
    private final Set<ScopedKey> mismatchesLogged = ConcurrentHashMap.newKeySet();

    /** The outcomes of the last hour, for the Dev UI; {@code null} outside dev mode. */
    private final OutcomeHistory history;

    DeliveryReport(IdempotencyMetrics metrics, MessageIdKey messageIds, OutcomeHistory history) {
        this.metrics = metrics;
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
        LOG.infof("Took over the claim on key '%s' for %s: its lease ran out (its owner died or stalled)",
                delivery.key(), delivery.target().plan().description());
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
                LOG.warnf("A duplicate of key '%s' of %s arrived %s after the key was confirmed, in the last tenth of"
                        + " its retention (%s): a duplicate arriving after the retention runs the work again. Raise the"
                        + " retention (quarkus.idempotency.retention, quarkus.idempotency.channels.\"%s\".retention)"
                        + " above the longest delay with which duplicates arrive (idempotency.duplicates.age shows it)",
                        delivery.key(), delivery.target().plan().description(), age, retention, channel);
            }
        }
        if (payload == PayloadMatch.MISMATCH && delivery.target().policy().payloadMismatch() == PayloadMismatch.WARN) {
            if (mismatchesLogged.size() >= MISMATCHES_REMEMBERED) {
                mismatchesLogged.clear();
            }
            if (mismatchesLogged.add(delivery.key())) {
                LOG.warnf("Message %s has key '%s' of %s, which was handled for message %s with a different payload:"
                        + " acknowledged as a duplicate without running. Two different messages share the key: the key"
                        + " function may be wrong, or the producer reused an id (quarkus.idempotency.payload-mismatch ="
                        + " dead-letter dead-letters such messages instead)", describeId(delivery.target().metadata()),
                        delivery.key(), delivery.target().plan().description(),
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
                    LOG.errorf("%s%s", delivery.answer().getMessage(), suffix);
                }
            }
            case BUSY -> LOG.debugf("Key '%s' of %s is being handled by another delivery; redelivering later",
                    delivery.key(), method);
            case UNCONFIRMED -> LOG.errorf(cause, "Could not confirm key '%s' after %s succeeded. The work happened, so"
                    + " the message is acknowledged; the claim will run out and a redelivery after that would run it"
                    + " again", delivery.key(), method);
            case CLAIM_LOST -> {
                if (delivery.answer() == null) {
                    LOG.warnf("The claim on key '%s' was no longer this delivery's when %s finished: taken over (the"
                            + " handler outlived its lease without renewal), or lost in a database crash (with"
                            + " asynchronous-claim-commit). Its work is done and the message is acknowledged, but the"
                            + " key is not confirmed: another delivery may repeat the work", delivery.key(), method);
                }
            }
            case RETRYING -> {
                HandlerFailedException retry = (HandlerFailedException) delivery.answer();
                String suffix = logs.admit("retried:" + method);
                if (suffix != null) {
                    LOG.warnf("Attempt %d of %d of %s for key '%s' failed: %s; retrying in %d ms%s", retry.attempt(),
                            retry.maxAttempts(), method, delivery.key(), cause, retry.retryDelay().toMillis(), suffix);
                }
                LOG.debugf(cause, "Attempt %d of key '%s' failed", retry.attempt(), delivery.key());
            }
            case DEAD_LETTERED -> {
                String suffix = logs.admit("dead-lettered:" + method);
                if (suffix != null && cause instanceof RecordedFailure before) {
                    LOG.errorf("Key '%s' of %s (message %s) was dead-lettered before (%s): dead-lettered again at once;"
                            + " release the key to replay it%s", delivery.key(), method,
                            describeId(delivery.target().metadata()), before, suffix);
                } else if (suffix != null) {
                    AttemptsExhaustedException spent = (AttemptsExhaustedException) delivery.answer();
                    LOG.errorf(cause, "Attempt %d of %d of %s for key '%s' (message %s) failed; the budget is spent, so"
                            + " the message is dead-lettered%s", spent.attempts(),
                            delivery.target().policy().retry().maxAttempts(),
                            method, delivery.key(), describeId(delivery.target().metadata()), suffix);
                }
            }
            case STORE_FAILED -> {
                String suffix = logs.admit("store-failed");
                if (suffix != null) {
                    LOG.warnf("%s, for %s; the message will be retried%s", delivery.answer().getMessage(), method,
                            suffix);
                }
            }
            default -> {
            }
        }
    }

    /** Counts and logs (bounded) a message whose key could not be computed: it is dead-lettered. */
    void keyMissing(String channel, String message) {
        metrics.delivery(channel, Outcome.KEY_MISSING);
        String suffix = logs.admit("key-missing:" + channel);
        if (suffix != null) {
            LOG.warn(message + suffix);
        }
    }

    /** Counts and logs (bounded) a message whose payload could not be converted for its method. */
    void unreadable(String channel, Metadata metadata, Throwable cause) {
        metrics.delivery(channel, Outcome.UNREADABLE);
        String suffix = logs.admit("unreadable:" + channel);
        if (suffix != null) {
            LOG.errorf("Dead-lettered message %s of channel %s at once: its payload could not be converted for the"
                    + " @Idempotent method (%s); retrying cannot help%s", describeId(metadata), channel, cause, suffix);
        }
    }

    /** @return the message id, quoted, for a log line */
    String describeId(Metadata metadata) {
        String id = messageIds.key(null, metadata);
        return id == null ? "without a message id" : "'" + id + "'";
    }
}
