package io.quarkiverse.idempotency;

/**
 * The idempotency store failed while claiming a key (database down, say). The handler did not run; the message is
 * redelivered later and never dead-lettered: the store is broken, not the message.
 */
public final class StoreUnavailableException extends IdempotencyException {

    public StoreUnavailableException(ScopedKey key, Throwable cause) {
        super("The idempotency store failed to claim key '" + key + "': " + cause, key, cause);
    }

    @Override
    public boolean requeue() {
        return true;
    }
}
