package io.quarkiverse.idempotency;

import java.util.List;
import java.util.Optional;

/**
 * The keys whose messages were dead-lettered. Such a key stays dead-lettered: a later delivery of it (the same message
 * again, or republished) is dead-lettered again at once, with the original reason, and gets no new budget. Once the
 * cause is fixed, release the key, then replay its message from the dead-letter queue: it runs with a fresh budget
 * ({@link DeadLetterReplays} does both, message by message).
 * Inject it; the Dev UI and the management endpoint ({@code quarkus.idempotency.management.enabled}) read and release
 * through it.
 */
public interface DeadLetters {

    /**
     * Releases a dead-lettered key: its next delivery runs, with a fresh attempt budget.
     *
     * @param scope the key's scope (by default the channel's name)
     * @param key the key, as the method's key function makes it (by default the message id)
     * @return {@code true} when a dead-lettered key was released; {@code false} when the key is in another state, or
     *         unknown
     */
    boolean release(String scope, String key);

    /**
     * @return the dead-lettered keys the filter matches, the most recently dead-lettered first, one page of them
     * @throws UnsupportedOperationException when the store cannot list its keys
     */
    default List<DeadLetter> list(DeadLetterFilter filter) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot list dead-lettered keys");
    }

    /**
     * @param key the key as {@link DeadLetter#key} shows it
     * @return the key, when it is dead-lettered
     */
    default Optional<DeadLetter> find(String scope, String key) {
        return list(DeadLetterFilter.all().forKey(scope, key).page(0, 1)).stream().findFirst();
    }

    /**
     * Releases every dead-lettered key the filter matches (its page ignored), in one step: their next deliveries run,
     * each with a fresh attempt budget.
     *
     * @return how many keys were released
     * @throws UnsupportedOperationException when the store cannot release by filter
     */
    default int releaseAll(DeadLetterFilter filter) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot release dead-lettered keys by filter");
    }
}
