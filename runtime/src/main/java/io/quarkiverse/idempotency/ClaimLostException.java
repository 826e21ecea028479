package io.quarkiverse.idempotency;

/**
 * When confirming, the delivery found that its lease-mode claim had been taken over by another delivery (its handler
 * outlived the lease without renewal). Its transaction is rolled back and the message redelivered later, when the
 * other delivery's outcome decides.
 */
public final class ClaimLostException extends IdempotencyException {

    public ClaimLostException(ScopedKey key) {
        super("The claim on key '" + key + "' was taken over by another delivery before the handler finished;"
                + " its transaction was rolled back. The handler outlived its lease without renewal: see"
                + " quarkus.idempotency.lease", key, null, true);
    }
}
