package io.quarkiverse.idempotency.runtime;

import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyException;

/**
 * Keeps idempotency outcomes out of the messaging provider's error log: SmallRye logs every exception a method
 * throws at ERROR with its stack trace ("SRMSG00200"), but a retry, a delivery in progress elsewhere, a missing key or
 * a store failure is an outcome that this extension already logs at the right level (and boundedly), not a bug in the
 * method; and so is a payload that never reached an {@code @Idempotent} method because it could not be converted for
 * it, which the failure handler logs once with the message id.
 */
final class OutcomeLogFilter implements Filter {

    static final String PROVIDER_CATEGORY = "io.smallrye.reactive.messaging.provider";

    private final Filter previous;

    private OutcomeLogFilter(Filter previous) {
        this.previous = previous;
    }

    static void install() {
        Logger logger = Logger.getLogger(PROVIDER_CATEGORY);
        if (!(logger.getFilter() instanceof OutcomeLogFilter)) {
            logger.setFilter(new OutcomeLogFilter(logger.getFilter()));
        }
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        Throwable thrown = record.getThrown();
        for (Throwable t = thrown; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof IdempotencyException) {
                return false;
            }
        }
        if (thrown != null) {
            // Logged on the message's own context: a message of an idempotent channel that did not reach the method.
            InboundMessage inbound = InboundMessages.current();
            if (inbound != null && inbound.delivery() == null) {
                return false;
            }
        }
        return previous == null || previous.isLoggable(record);
    }
}
