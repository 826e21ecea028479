package io.quarkiverse.idempotency.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Dead-lettered keys listed, filtered, paged, looked up and released through {@link DeadLetters}, the one reader of the
 * Dev UI and the management endpoint, whatever the store: 3 keys of {@link #PAYMENTS} spent their budget on a
 * timeout, 2 of {@link #REFUNDS} on a constraint violation, one of PAYMENTS failed once only (not dead-lettered), one
 * is confirmed. The store holds no other dead letters.
 */
public final class DeadLetterScenario {

    /** The scenario's scopes, apart from any other test's keys in a shared table. */
    public static final String PAYMENTS = "dead-letter-payments";
    public static final String REFUNDS = "dead-letter-refunds";

    static final Duration LEASE = Duration.ofSeconds(30);
    static final Duration RETENTION = Duration.ofHours(1);

    private DeadLetterScenario() {
    }

    /**
     * Writes the keys; returns when the first of the last two dead letters was dead-lettered, as the store recorded it
     * (its own clock: the database's, for the database store).
     */
    public static Instant deadLetter(IdempotencyStore store) {
        for (int i = 1; i <= 3; i++) {
            dead(store, new ScopedKey(PAYMENTS, "order-" + i), "java.net.SocketTimeoutException: Read timed out");
        }
        for (int i = 1; i <= 2; i++) {
            dead(store, new ScopedKey(REFUNDS, "refund-" + i),
                    "org.postgresql.util.PSQLException: ERROR: duplicate key value violates unique constraint");
        }
        ScopedKey once = new ScopedKey(PAYMENTS, "order-9");
        store.claim(once, "t-once", LEASE, RETENTION, MessageFacts.NONE);
        store.recordFailure(once, "t-once", "java.net.SocketTimeoutException: Read timed out", 3, RETENTION);
        ScopedKey done = new ScopedKey(PAYMENTS, "order-10");
        store.claim(done, "t-done", LEASE, RETENTION, MessageFacts.NONE);
        store.confirm(done, "t-done", RETENTION);
        Instant later = store.deadLetters(DeadLetterFilter.all().inScope(REFUNDS)).stream()
                .map(DeadLetter::deadLetteredAt).min(Instant::compareTo).orElseThrow();
        Instant lastPayment = store.deadLetters(DeadLetterFilter.all().inScope(PAYMENTS)).stream()
                .map(DeadLetter::deadLetteredAt).max(Instant::compareTo).orElseThrow();
        assertTrue(lastPayment.isBefore(later), "each dead letter recorded after the one before it: " + lastPayment
                + " then " + later);
        return later;
    }

    private static void dead(IdempotencyStore store, ScopedKey key, String failure) {
        String token = "t-" + key.key();
        assertEquals(ClaimResult.NEW, store.claim(key, token, LEASE, RETENTION,
                new MessageFacts("msg-" + key.key(), "fp-" + key.key())).result());
        store.recordFailure(key, token, failure, 1, RETENTION);
    }

    public static void check(DeadLetters deadLetters, IdempotencyStore store, Instant later) {
        List<DeadLetter> all = deadLetters.list(DeadLetterFilter.all());
        assertEquals(List.of("refund-1", "refund-2", "order-1", "order-2", "order-3").stream().sorted().toList(),
                all.stream().map(DeadLetter::key).sorted().toList(),
                "only the keys whose budget is spent, not the failed-once one nor the confirmed one: " + all);
        assertTrue(all.get(0).scope().equals(REFUNDS) && all.get(1).scope().equals(REFUNDS),
                "the most recently dead-lettered first: " + all);
        DeadLetter first = deadLetters.find(PAYMENTS, "order-1").orElseThrow();
        assertEquals(1, first.attempts());
        assertEquals("java.net.SocketTimeoutException: Read timed out", first.reason());
        assertEquals("msg-order-1", first.facts().messageId(), "with the id of the message that wrote it");
        assertTrue(first.deadLetteredAt().isBefore(later) && first.expiresAt().isAfter(first.deadLetteredAt()),
                "" + first);
        assertTrue(deadLetters.find(PAYMENTS, "order-9").isEmpty(), "a key with budget left is not dead-lettered");
        assertTrue(deadLetters.find(PAYMENTS, "order-10").isEmpty(), "nor a confirmed key");

        assertEquals(3, deadLetters.list(DeadLetterFilter.all().inScope(PAYMENTS)).size());
        assertEquals(2, deadLetters.list(DeadLetterFilter.all().withReasonContaining("UNIQUE CONSTRAINT")).size(),
                "the reason matched ignoring case");
        assertEquals(2, deadLetters.list(DeadLetterFilter.all().deadLetteredSince(later)).size());
        List<DeadLetter> page1 = deadLetters.list(DeadLetterFilter.all().page(0, 2));
        List<DeadLetter> page2 = deadLetters.list(DeadLetterFilter.all().page(2, 2));
        List<DeadLetter> page3 = deadLetters.list(DeadLetterFilter.all().page(4, 2));
        assertEquals(List.of(2, 2, 1), List.of(page1.size(), page2.size(), page3.size()));
        assertEquals(all, concat(page1, page2, page3), "pages in the same order as the whole list");
        assertThrows(IllegalArgumentException.class, () -> DeadLetterFilter.all().page(0, 0));
        assertThrows(IllegalArgumentException.class, () -> DeadLetterFilter.all().forKey(null, "order-1"));

        assertEquals(2, deadLetters.releaseAll(DeadLetterFilter.all().withReasonContaining("constraint")),
                "one reason released, in one step");
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey(REFUNDS, "refund-1"), "t-replay", LEASE, RETENTION,
                MessageFacts.NONE).result(), "a released key's replay runs");
        assertEquals(3, deadLetters.list(DeadLetterFilter.all()).size(), "the other reason is still dead-lettered");
        assertEquals(1, deadLetters.releaseAll(DeadLetterFilter.all().forKey(PAYMENTS, "order-2")));
        assertEquals(0, deadLetters.releaseAll(DeadLetterFilter.all().forKey(PAYMENTS, "order-2")),
                "a released key is released once");
        assertFalse(deadLetters.find(PAYMENTS, "order-2").isPresent());
        assertEquals(2, deadLetters.list(DeadLetterFilter.all()).size());
    }

    @SafeVarargs
    private static List<DeadLetter> concat(List<DeadLetter>... pages) {
        return java.util.Arrays.stream(pages).flatMap(List::stream).toList();
    }
}
