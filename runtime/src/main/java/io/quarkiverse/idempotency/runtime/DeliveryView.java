package io.quarkiverse.idempotency.runtime;

import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * What a delivery shows of itself to what it reports to ({@link DeliveryListener}): where it is, not how it moves.
 */
public interface DeliveryView {

    /** @return the method, channel, key and metadata of the delivery */
    DeliveryTarget target();

    /** @return the message's key, under its scope */
    default ScopedKey key() {
        return target().key();
    }

    DeliveryState state();

    /** @return where the message comes from, once its key was found confirmed; else {@code null} */
    DuplicateOrigin duplicateOrigin();

    /** @return what the message is nacked with, once the delivery ended that way; else {@code null} */
    IdempotencyException answer();

    /** @return whether the key was confirmed before: the message is acked without running the method */
    default boolean isDuplicate() {
        return state() == DeliveryState.DUPLICATE;
    }
}
