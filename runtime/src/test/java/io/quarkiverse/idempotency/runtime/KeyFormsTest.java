package io.quarkiverse.idempotency.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.ScopedKey;

class KeyFormsTest {

    static final String SECRET = "a secret of at least thirty-two characters";
    static final ScopedKey KEY = new ScopedKey("payments", "customer@example.com");

    @Test
    void aDigestIsKeyedByTheSecretAndHidesTheKey() {
        KeyForms digests = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, null);
        ScopedKey stored = digests.stored("payments", KEY);
        assertEquals("payments", stored.scope());
        assertTrue(stored.key().startsWith("hmac:") && stored.key().length() == 5 + 43, stored.key());
        assertFalse(stored.key().contains("example"));
        assertEquals(stored, digests.stored("payments", KEY), "the same key, the same digest");
        assertNotEquals(stored, new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET + "!", null).stored("payments", KEY),
                "another secret, another digest");
    }

    @Test
    void eachChannelStoresItsKeysAsConfigured() {
        KeyForms forms = new KeyForms(KeyStorage.READABLE, Map.of("customers", KeyStorage.DIGEST), SECRET, null);
        assertSame(KEY, forms.stored("payments", KEY));
        assertTrue(forms.stored("customers", KEY).key().startsWith("hmac:"));
        assertNull(forms.previous("customers", KEY, Duration.ofDays(1)), "not changing: no other form");
    }

    @Test
    void forOneRetentionAfterAChangeTheOtherFormIsLookedUpBothWays() {
        Instant changed = Instant.now().minus(Duration.ofHours(1));
        KeyForms toDigest = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, changed);
        assertEquals(KEY, toDigest.previous("payments", KEY, Duration.ofDays(1)), "readable before");
        KeyForms toReadable = new KeyForms(KeyStorage.READABLE, Map.of(), SECRET, changed);
        assertEquals(toDigest.stored("payments", KEY), toReadable.previous("payments", KEY, Duration.ofDays(1)),
                "the digest before");
        assertNull(toDigest.previous("payments", KEY, Duration.ofMinutes(30)), "a retention later it stops");
    }

    @Test
    void aDigestWithoutASecretOfThirtyTwoCharactersIsRefused() {
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> new KeyForms(KeyStorage.DIGEST, Map.of(), null, null));
        assertTrue(none.getMessage().contains("needs quarkus.idempotency.key-digest-secret, of at least 32 characters"
                + " (none is set)"), none.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new KeyForms(KeyStorage.READABLE, Map.of(), "short",
                Instant.now()), "changing from digests needs the secret too");
    }
}
