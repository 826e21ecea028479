package io.quarkiverse.idempotency;

import java.util.Objects;

/**
 * A key together with the scope it lives in.
 *
 * @param scope the scope (by default the channel name)
 * @param key the key
 */
public record ScopedKey(String scope, String key) {

    public ScopedKey {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(key, "key");
    }

    @Override
    public String toString() {
        return scope + ":" + key;
    }
}
