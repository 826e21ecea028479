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
    static final Duration DAY = Duration.ofDays(1);

    @Test
    void aDigestIsKeyedByTheSecretAndHidesTheKey() {
        KeyForms digests = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, null);
        ScopedKey stored = digests.forms("payments", KEY, DAY).stored();
        assertEquals("payments", stored.scope());
        assertTrue(stored.key().startsWith("hmac:") && stored.key().length() == 5 + 43, stored.key());
        assertFalse(stored.key().contains("example"));
        assertEquals(stored, digests.forms("payments", KEY, DAY).stored(), "the same key, the same digest");
        assertNotEquals(stored,
                new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET + "!", null).forms("payments", KEY, DAY).stored(),
                "another secret, another digest");
    }

    /**
     * What ids derived from a key are computed from (a processor's output id) stays the same across a change of storage:
     * before the change, during the window where both forms are used, and after it.
     */
    @Test
    void theKeysIdentityDoesNotChangeWithItsStorage() {
        ScopedKey digest = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, null).forms("payments", KEY, DAY).stored();
        Instant now = Instant.now();
        for (Instant changedAt : new Instant[] { now.plusSeconds(3600), now.minusSeconds(60),
                now.minus(DAY.multipliedBy(2)) }) {
            assertEquals(digest, new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, changedAt).identity(KEY),
                    "changed at " + changedAt);
        }
        assertEquals(digest, new KeyForms(KeyStorage.READABLE, Map.of("payments", KeyStorage.DIGEST), SECRET, null)
                .identity(KEY));
        assertEquals(KEY, new KeyForms(KeyStorage.READABLE, Map.of(), null, null).identity(KEY),
                "without a secret, the key as read");
    }

    @Test
    void eachChannelStoresItsKeysAsConfigured() {
        KeyForms forms = new KeyForms(KeyStorage.READABLE, Map.of("customers", KeyStorage.DIGEST), SECRET, null);
        assertSame(KEY, forms.forms("payments", KEY, DAY).stored());
        assertTrue(forms.forms("customers", KEY, DAY).stored().key().startsWith("hmac:"));
        assertNull(forms.forms("customers", KEY, Duration.ofDays(1)).previous(), "not changing: no other form");
    }

    @Test
    void forOneRetentionAfterAChangeTheOtherFormIsLookedUpBothWays() {
        Instant changed = Instant.now().minus(Duration.ofHours(1));
        KeyForms toDigest = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, changed);
        assertEquals(KEY, toDigest.forms("payments", KEY, Duration.ofDays(1)).previous(), "readable before");
        KeyForms toReadable = new KeyForms(KeyStorage.READABLE, Map.of(), SECRET, changed);
        assertEquals(toDigest.forms("payments", KEY, DAY).stored(),
                toReadable.forms("payments", KEY, Duration.ofDays(1)).previous(),
                "the digest before");
        assertNull(toDigest.forms("payments", KEY, Duration.ofMinutes(30)).previous(), "a retention later it stops");
    }

    /**
     * A change announced ahead of time (a rolling deployment that sets it for an instant after it completes): until that
     * instant the keys keep the form the instances being replaced write, and the form to come is looked up too; from
     * it, the new form, the old one looked up for a retention.
     */
    @Test
    void aChangeAnnouncedAheadKeepsTheOldFormUntilItsInstant() {
        KeyForms ahead = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, Instant.now().plus(Duration.ofHours(1)));
        KeyForms done = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET, null);
        ScopedKey digest = done.forms("payments", KEY, DAY).stored();
        KeyForms.Forms before = ahead.forms("payments", KEY, DAY);
        assertEquals(KEY, before.stored(), "readable, as the instances of the old configuration write it");
        assertEquals(digest, before.previous(), "the digest looked up too: an instance whose clock is ahead wrote it");

        KeyForms.Forms after = new KeyForms(KeyStorage.DIGEST, Map.of(), SECRET,
                Instant.now().minus(Duration.ofSeconds(1))).forms("payments", KEY, DAY);
        assertEquals(digest, after.stored());
        assertEquals(KEY, after.previous());

        KeyForms.Forms back = new KeyForms(KeyStorage.READABLE, Map.of(), SECRET, Instant.now().plus(Duration.ofHours(1)))
                .forms("payments", KEY, DAY);
        assertEquals(digest, back.stored(), "back to readable, announced: digests until the instant");
        assertEquals(KEY, back.previous());
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
