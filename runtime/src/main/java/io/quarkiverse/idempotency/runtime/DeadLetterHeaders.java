package io.quarkiverse.idempotency.runtime;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.KeyMissingException;
import io.quarkiverse.idempotency.PayloadMismatchException;
import io.quarkiverse.idempotency.UnreadablePayloadException;

/**
 * The headers a dead letter carries on every connector, saying why it was dead-lettered.
 */
public final class DeadLetterHeaders {

    /** Header: why the message was dead-lettered (the failure's class and message). */
    public static final String REASON = "x-idempotency-reason";
    /** Header: the failure's exception class. */
    public static final String EXCEPTION = "x-idempotency-exception";
    /** Header: which outcome dead-lettered it ({@code dead-lettered}, {@code key-missing}, {@code unreadable}). */
    public static final String OUTCOME = "x-idempotency-outcome";
    /** Header: how many attempts failed, for a spent budget. */
    public static final String ATTEMPTS = "x-idempotency-attempts";
    /** Header: the idempotency key, when one was computed. */
    public static final String KEY = "x-idempotency-key";
    /** Header: the channel that consumed it. */
    public static final String CHANNEL = "x-idempotency-channel";
    /** Header: when it was dead-lettered, ISO-8601. */
    public static final String DEAD_LETTERED_AT = "x-idempotency-dead-lettered-at";

    /** Every header above. */
    public static final Set<String> NAMES = Set.of(REASON, EXCEPTION, OUTCOME, ATTEMPTS, KEY, CHANNEL,
            DEAD_LETTERED_AT);

    private static final int MAX_HEADER = 1000;

    private DeadLetterHeaders() {
    }

    /**
     * @return the headers of a message of {@code channel} dead-lettered for {@code reason}, in a stable order; the
     *         attempt count is an {@link Integer}, every other value a string
     */
    public static Map<String, Object> of(String channel, IdempotencyException reason) {
        Map<String, Object> headers = new LinkedHashMap<>();
        Throwable cause = reason.getCause() != null ? reason.getCause() : reason;
        // the handler's or the conversion's own failure; for a missing key or a payload mismatch, the extension's
        // explanation
        headers.put(REASON, truncate(reason instanceof KeyMissingException || reason instanceof PayloadMismatchException
                ? reason.getMessage()
                : String.valueOf(cause)));
        headers.put(EXCEPTION, cause instanceof RecordedFailure recorded ? recorded.exceptionClass()
                : cause.getClass().getName());
        headers.put(OUTCOME, outcome(reason));
        headers.put(CHANNEL, channel);
        headers.put(DEAD_LETTERED_AT, Instant.now().toString());
        if (reason.key() != null) {
            headers.put(KEY, truncate(reason.key().toString()));
        }
        if (reason instanceof AttemptsExhaustedException exhausted) {
            headers.put(ATTEMPTS, exhausted.attempts());
        }
        return headers;
    }

    /** @return the {@link #OUTCOME} of a dead letter */
    public static String outcome(IdempotencyException reason) {
        return reason instanceof AttemptsExhaustedException ? "dead-lettered"
                : reason instanceof KeyMissingException ? "key-missing"
                        : reason instanceof UnreadablePayloadException ? "unreadable"
                                : reason instanceof PayloadMismatchException ? "payload-mismatch" : "rejected";
    }

    /** @return whether a header's value may have been cut at the headers' length limit */
    public static boolean truncated(String value) {
        return value.length() >= MAX_HEADER;
    }

    private static String truncate(String value) {
        return value.length() <= MAX_HEADER ? value : value.substring(0, MAX_HEADER);
    }
}
