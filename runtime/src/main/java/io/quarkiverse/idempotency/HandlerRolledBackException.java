package io.quarkiverse.idempotency;

/**
 * The handler returned normally but its transaction rolled back (it was marked rollback-only). The work did not
 * happen, so the claim was forgotten and the message is nacked like any handler failure: the channel's failure
 * strategy decides.
 */
public final class HandlerRolledBackException extends RuntimeException {

    private final ScopedKey key;

    public HandlerRolledBackException(ScopedKey key) {
        super("The transaction of the handler of key '" + key + "' rolled back; the key was forgotten", null, false,
                false);
        this.key = key;
    }

    /** @return the key whose claim was forgotten */
    public ScopedKey key() {
        return key;
    }
}
