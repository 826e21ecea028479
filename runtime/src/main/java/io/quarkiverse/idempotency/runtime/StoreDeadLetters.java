package io.quarkiverse.idempotency.runtime;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Lists and releases dead-lettered keys in the store, for operators and replays.
 */
@Singleton
public class StoreDeadLetters implements DeadLetters {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(StoreDeadLetters.class);

    private final IdempotencyStore store;

    @Inject
    public StoreDeadLetters(IdempotencyStore store) {
        this.store = store;
    }

    @Override
    public boolean release(String scope, String key) {
        ScopedKey scoped = new ScopedKey(scope, key);
        boolean released = store.releaseDeadLetter(scoped);
        if (released) {
            LOG.released(scoped);
        }
        return released;
    }

    /**
     * Releases a key for the replay of its message, which logs how many it released (no line per key).
     *
     * @return whether a dead-lettered key was released
     */
    public boolean releaseForReplay(String scope, String key) {
        return store.releaseDeadLetter(new ScopedKey(scope, key));
    }

    @Override
    public List<DeadLetter> list(DeadLetterFilter filter) {
        return store.deadLetters(filter);
    }

    @Override
    public int releaseAll(DeadLetterFilter filter) {
        return releaseAll(filter, "the application");
    }

    /** {@link #releaseAll(DeadLetterFilter)}, logged with who asked (the Dev UI, the management endpoint). */
    public int releaseAll(DeadLetterFilter filter, String through) {
        int released = store.releaseDeadLetters(filter);
        if (released > 0) {
            LOG.releasedMatching(released, filter, through);
        }
        return released;
    }
}
