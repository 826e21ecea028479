package io.quarkiverse.idempotency;

/**
 * While the message waited to be retried in place, this consumer stopped owning it (Kafka: its partition was revoked
 * in a rebalance): the consumer that owns it now handles it, so this one lets it go, neither acknowledged nor
 * dead-lettered, and retries it no more.
 */
public final class DeliveryRevokedException extends IdempotencyException {

    public DeliveryRevokedException(ScopedKey key, IdempotencyException last) {
        super("This consumer no longer owns the message of key '" + key + "' (its partition was revoked while it waited"
                + " to be retried); the consumer that owns it now handles it", key, last, true);
    }
}
