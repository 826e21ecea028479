package io.quarkiverse.idempotency.runtime;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.quarkiverse.idempotency.ScopedKey;

/**
 * How each channel's keys are stored (readable, or as keyed digests), and, while the storage changes (from the
 * deployment that announces the change until one retention after it), the other form under which a key's record may
 * be.
 */
final class KeyForms {

    /** What a stored digest starts with. */
    static final String DIGEST_PREFIX = "hmac:";
    static final int MINIMUM_SECRET = 32;

    private static final Base64.Encoder BASE64 = Base64.getUrlEncoder().withoutPadding();

    private final KeyStorage defaultStorage;
    private final Map<String, KeyStorage> channels;
    private final Mac prototype;
    private final Instant changedAt;

    /**
     * @throws IllegalArgumentException when a digest is asked for without a secret of at least
     *         {@value #MINIMUM_SECRET} characters
     */
    KeyForms(KeyStorage defaultStorage, Map<String, KeyStorage> channels, String secret, Instant changedAt) {
        this.defaultStorage = defaultStorage;
        this.channels = Map.copyOf(channels);
        this.changedAt = changedAt;
        boolean digests = defaultStorage == KeyStorage.DIGEST || channels.containsValue(KeyStorage.DIGEST)
                || changedAt != null;
        if (!digests) {
            this.prototype = null;
            return;
        }
        if (secret == null || secret.length() < MINIMUM_SECRET) {
            throw new IllegalArgumentException("quarkus.idempotency.key-storage=digest"
                    + (changedAt != null ? " (now, or before quarkus.idempotency.key-storage-changed-at)" : "")
                    + " needs quarkus.idempotency.key-digest-secret, of at least " + MINIMUM_SECRET + " characters ("
                    + (secret == null ? "none is set" : "it has " + secret.length()) + "): without a secret a key's"
                    + " digest could be recomputed from a guessed key");
        }
        try {
            this.prototype = Mac.getInstance("HmacSHA256");
            prototype.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA-256 is required of every JVM", e);
        }
    }

    /**
     * The forms of a key at this instant: the one it is stored in, and the other one under which its record may be
     * while the storage changes. The storage in effect changes at {@code key-storage-changed-at}: before it, the
     * channel keeps its keys in the form it had before the change, and the form it will have is looked up too; after
     * it, the new form, and the old one is looked up for one retention. So every instance of a rolling deployment that
     * sets the change ahead of time writes the same form as the instances it replaces until the instant, and all switch
     * at that instant, each looking up the other form.
     *
     * @return the key as stored now, and its other form ({@code null} when the storage is not changing)
     */
    Forms forms(String channel, ScopedKey key, Duration retention) {
        KeyStorage storage = storage(channel);
        if (changedAt == null) {
            return new Forms(form(storage, key), null);
        }
        Instant now = Instant.now();
        if (now.isAfter(changedAt.plus(retention))) {
            return new Forms(form(storage, key), null);
        }
        KeyStorage current = now.isBefore(changedAt) ? other(storage) : storage;
        return new Forms(form(current, key), form(other(current), key));
    }

    /**
     * @param stored the key as stored now
     * @param previous the key in its other form while the storage changes, else {@code null}
     */
    record Forms(ScopedKey stored, ScopedKey previous) {
    }

    private ScopedKey form(KeyStorage storage, ScopedKey key) {
        return storage == KeyStorage.DIGEST ? digest(key) : key;
    }

    private static KeyStorage other(KeyStorage storage) {
        return storage == KeyStorage.DIGEST ? KeyStorage.READABLE : KeyStorage.DIGEST;
    }

    /**
     * @return the key in a form that does not change with the storage: its digest whenever a secret is configured (a
     *         digest is, or was, or will be stored somewhere), else the key as read; what ids derived from a key are
     *         computed from, so that they stay the same across a change of storage
     */
    ScopedKey identity(ScopedKey key) {
        return prototype == null ? key : digest(key);
    }

    /** @return whether the storage changed at some point (the store must then be able to look keys up) */
    boolean changing() {
        return changedAt != null;
    }

    private KeyStorage storage(String channel) {
        return channel == null ? defaultStorage : channels.getOrDefault(channel, defaultStorage);
    }

    private ScopedKey digest(ScopedKey key) {
        Mac mac;
        try {
            mac = (Mac) prototype.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
        byte[] digest = mac.doFinal(key.key().getBytes(StandardCharsets.UTF_8));
        return new ScopedKey(key.scope(), DIGEST_PREFIX + BASE64.encodeToString(digest));
    }
}
