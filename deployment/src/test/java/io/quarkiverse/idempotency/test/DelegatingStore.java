package io.quarkiverse.idempotency.test;

import java.time.Duration;
import java.util.Collection;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * A store bean for tests that need to observe or break claims: everything goes to an in-memory store, and a test
 * overrides what it needs. Being an application bean, it replaces the built-in store.
 */
public abstract class DelegatingStore implements IdempotencyStore {

    protected final InMemoryIdempotencyStore delegate = new InMemoryIdempotencyStore("test-worker");

    @Override
    public ClaimResult claim(String scope, String key, Duration retention, Duration claimTimeout) {
        return delegate.claim(scope, key, retention, claimTimeout);
    }

    @Override
    public boolean confirm(String scope, String key, Duration retention) {
        return delegate.confirm(scope, key, retention);
    }

    @Override
    public boolean forget(String scope, String key) {
        return delegate.forget(scope, key);
    }

    @Override
    public void renew(Collection<ScopedKey> keys) {
        delegate.renew(keys);
    }

    @Override
    public int purgeExpired(int limit) {
        return delegate.purgeExpired(limit);
    }
}
