package io.quarkiverse.idempotency.runtime;

/**
 * The store is set up wrongly, not merely unreachable: its table is missing, or its database is not one it supports.
 * The message names the remedy.
 */
public class StoreMisconfiguredException extends IllegalStateException {

    public StoreMisconfiguredException(String message, Throwable cause) {
        super(message, cause);
    }
}
