package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.TimeUnit;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.MessageIdKey;

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
    private final LogThrottle logs = new LogThrottle(10, TimeUnit.SECONDS, 5);

    DeliveryReport(IdempotencyMetrics metrics, MessageIdKey messageIds) {
        this.metrics = metrics;
        this.messageIds = messageIds;
    }

    @Override
    public void claimAnswered(DeliveryView delivery, long nanos) {
        metrics.claimLatency(delivery.target().channel(), nanos);
    }

    @Override
    public void tookOver(DeliveryView delivery) {
        metrics.takeover(delivery.target().channel());
        LOG.infof("Took over the claim on key '%s' for %s: its lease ran out (its owner died or stalled)",
                delivery.key(), delivery.target().plan().description());
    }

    @Override
    public void ended(DeliveryView delivery, Throwable cause) {
        DeliveryState state = delivery.state();
        if (state.outcome() != null) {
            metrics.delivery(delivery.target().channel(), state.outcome());
        }
        String method = delivery.target().plan().description();
        switch (state) {
            case DUPLICATE -> LOG.debugf("Key '%s' of %s was handled before: acknowledged without running",
                    delivery.key(), method);
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
