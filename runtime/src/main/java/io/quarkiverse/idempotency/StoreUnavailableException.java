package io.quarkiverse.idempotency;

/**
 * The idempotency store failed (database down, say) while claiming or confirming a key. When it failed at claim
 * time, the handler did not run; when it failed confirming inside the handler's transaction, the transaction rolled
 * back. Either way the message is redelivered later and never dead-lettered: the store is broken, not the message.
 */
public final class StoreUnavailableException extends IdempotencyException {

    /**
     * @param operation what the store was doing ("claim", "confirm")
     */
    public StoreUnavailableException(String operation, ScopedKey key, Throwable cause) {
        super("The idempotency store failed to " + operation + " key '" + key + "': " + cause, key, cause, true);
    }
}
