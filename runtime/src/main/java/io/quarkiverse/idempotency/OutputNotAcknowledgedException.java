package io.quarkiverse.idempotency;

import java.time.Duration;

/**
 * A processor's output was not acknowledged downstream within {@code quarkus.idempotency.output-ack-timeout}: the
 * attempt failed (its key is not confirmed), and its input comes back to emit again. An acknowledgement that arrives
 * later changes nothing.
 */
public final class OutputNotAcknowledgedException extends RuntimeException {

    public OutputNotAcknowledgedException(Duration timeout) {
        super("The output was not acknowledged downstream within " + timeout.toMillis() + " ms"
                + " (quarkus.idempotency.output-ack-timeout)", null, false, false);
    }
}
