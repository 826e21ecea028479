package io.quarkiverse.idempotency;

/**
 * The handler returned normally but its transaction rolled back (it was marked rollback-only). The work did not
 * happen, so this counts as a failed attempt, like an exception: it is the cause of the
 * {@link HandlerFailedException} or {@link AttemptsExhaustedException} the message is nacked with.
 */
public final class HandlerRolledBackException extends RuntimeException {

    private final ScopedKey key;

    public HandlerRolledBackException(ScopedKey key) {
        super("The transaction of the handler of key '" + key + "' was rolled back (marked rollback-only)", null, false,
                false);
        this.key = key;
    }

    /** @return the key whose attempt rolled back */
    public ScopedKey key() {
        return key;
    }
}
