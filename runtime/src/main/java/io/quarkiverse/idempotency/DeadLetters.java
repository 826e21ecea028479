package io.quarkiverse.idempotency;

/**
 * The keys whose messages were dead-lettered. Such a key stays dead-lettered: a later delivery of it (the same message
 * again, or republished) is dead-lettered again at once, with the original reason, and gets no new budget. Once the
 * cause is fixed, release the key, then replay its message from the dead-letter queue: it runs with a fresh budget.
 * Inject it; the Dev UI's key list has the same action.
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
}
