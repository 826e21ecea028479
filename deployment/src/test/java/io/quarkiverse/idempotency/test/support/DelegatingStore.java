package io.quarkiverse.idempotency.test.support;

import java.time.Duration;
import java.util.Collection;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * A store bean for tests that need to observe or break claims: everything goes to an in-memory store, and a test
 * overrides what it needs. Being an application bean, it replaces the built-in store.
 */
public abstract class DelegatingStore implements IdempotencyStore {

    protected final InMemoryIdempotencyStore delegate = new InMemoryIdempotencyStore();

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
        return delegate.claim(key, token, lease, retention);
    }

    @Override
    public boolean confirm(ScopedKey key, String token, Duration retention) {
        return delegate.confirm(key, token, retention);
    }

    @Override
    public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        return delegate.recordFailure(key, token, failure, maxAttempts, retention);
    }

    @Override
    public boolean release(ScopedKey key, String token) {
        return delegate.release(key, token);
    }

    @Override
    public void renew(Collection<HeldClaim> claims) {
        delegate.renew(claims);
    }

    @Override
    public int purgeExpired(int limit) {
        return delegate.purgeExpired(limit);
    }
}
