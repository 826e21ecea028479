package io.quarkiverse.idempotency.runtime;

import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyException;

/**
 * Keeps idempotency outcomes out of the messaging provider's error log: SmallRye logs every exception a method
 * throws at ERROR ("SRMSG00200"), but a delivery in progress elsewhere, a missing key or a store failure is an
 * outcome that this extension already logs at the right level, not a bug in the method.
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
        for (Throwable t = record.getThrown(); t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof IdempotencyException) {
                return false;
            }
        }
        return previous == null || previous.isLoggable(record);
    }
}
