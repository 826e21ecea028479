package io.quarkiverse.idempotency;

/**
 * When confirming, the handler found that its claim had been taken over by another worker (it ran longer than the
 * claim timeout without renewal). Its transaction is rolled back and the message redelivered later, when the other
 * worker's outcome decides.
 */
public final class ClaimLostException extends IdempotencyException {

    public ClaimLostException(ScopedKey key) {
        super("The claim on key '" + key + "' was taken over by another worker before the handler finished;"
                + " its transaction was rolled back. Raise the claim timeout above the slowest handler", key, null);
    }

    @Override
    public boolean requeue() {
        return true;
    }
}
