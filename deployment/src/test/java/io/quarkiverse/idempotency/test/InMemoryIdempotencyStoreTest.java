package io.quarkiverse.idempotency.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * The in-memory store's semantics, with a clock the test moves.
 */
class InMemoryIdempotencyStoreTest {

    static final Duration RETENTION = Duration.ofHours(1);
    static final Duration CLAIM_TIMEOUT = Duration.ofMinutes(5);

    final AtomicLong now = new AtomicLong(1_000_000_000L);
    final InMemoryIdempotencyStore a = new InMemoryIdempotencyStore("worker-a", now::get);
    final InMemoryIdempotencyStore b = a.asWorker("worker-b");

    @Test
    void claimAnswersNewThenBusyThenDone() {
        assertEquals(ClaimResult.NEW, a.claim("s", "k", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.BUSY, b.claim("s", "k", RETENTION, CLAIM_TIMEOUT));
        assertTrue(a.confirm("s", "k", RETENTION));
        assertEquals(ClaimResult.DONE, b.claim("s", "k", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.DONE, a.claim("s", "k", RETENTION, CLAIM_TIMEOUT));
    }

    @Test
    void scopesNeverCollide() {
        assertEquals(ClaimResult.NEW, a.claim("orders", "A-1", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.NEW, a.claim("invoices", "A-1", RETENTION, CLAIM_TIMEOUT));
    }

    @Test
    void staleClaimIsTakenOverButConfirmedKeyNeverIs() {
        a.claim("s", "stale", RETENTION, CLAIM_TIMEOUT);
        a.claim("s", "done", RETENTION, CLAIM_TIMEOUT);
        a.confirm("s", "done", RETENTION);
        advance(CLAIM_TIMEOUT.plusSeconds(1));
        assertEquals(ClaimResult.TAKEN_OVER, b.claim("s", "stale", RETENTION, CLAIM_TIMEOUT));
        assertEquals(ClaimResult.DONE, b.claim("s", "done", RETENTION, CLAIM_TIMEOUT));
    }

    @Test
    void afterTakeoverTheOldOwnerCanNeitherConfirmNorForget() {
        a.claim("s", "k", RETENTION, CLAIM_TIMEOUT);
        advance(CLAIM_TIMEOUT.plusSeconds(1));
        assertEquals(ClaimResult.TAKEN_OVER, b.claim("s", "k", RETENTION, CLAIM_TIMEOUT));
        assertFalse(a.confirm("s", "k", RETENTION), "fenced: the claim is b's now");
        assertFalse(a.forget("s", "k"), "fenced: the claim is b's now");
        assertEquals(ClaimResult.BUSY, a.claim("s", "k", RETENTION, CLAIM_TIMEOUT), "b's claim still stands");
        assertTrue(b.confirm("s", "k", RETENTION));
    }

    @Test
    void forgetDeletesOnlyOwnUnconfirmedClaim() {
        a.claim("s", "k", RETENTION, CLAIM_TIMEOUT);
        assertFalse(b.forget("s", "k"));
        assertTrue(a.forget("s", "k"));
        assertEquals(ClaimResult.NEW, b.claim("s", "k", RETENTION, CLAIM_TIMEOUT));
        b.confirm("s", "k", RETENTION);
        assertFalse(b.forget("s", "k"), "a confirmed key is never forgotten");
    }

    @Test
    void renewalKeepsASlowLiveClaimFromBeingTakenOver() {
        a.claim("s", "slow", RETENTION, CLAIM_TIMEOUT);
        advance(CLAIM_TIMEOUT.minusSeconds(10));
        a.renew(List.of(new ScopedKey("s", "slow")));
        advance(Duration.ofSeconds(20));
        assertEquals(ClaimResult.BUSY, b.claim("s", "slow", RETENTION, CLAIM_TIMEOUT));
    }

    @Test
    void theWindowSlidesKeysAreForgottenAfterRetention() {
        a.claim("s", "old", RETENTION, CLAIM_TIMEOUT);
        a.confirm("s", "old", RETENTION);
        advance(RETENTION.plusSeconds(1));
        a.claim("s", "young", RETENTION, CLAIM_TIMEOUT);
        assertEquals(1, a.purgeExpired(100), "only the expired key is purged");
        assertEquals(ClaimResult.NEW, a.claim("s", "old", RETENTION, CLAIM_TIMEOUT), "remembered no longer");
        assertEquals(ClaimResult.BUSY, b.claim("s", "young", RETENTION, CLAIM_TIMEOUT));
    }

    @Test
    void expiredKeysAreSweptWithoutATimer() {
        for (int i = 0; i < 2_000; i++) {
            a.claim("s", "k" + i, Duration.ofSeconds(1), CLAIM_TIMEOUT);
        }
        advance(Duration.ofSeconds(2));
        for (int i = 0; i < 2_000; i++) {
            a.claim("s", "fresh" + i, RETENTION, CLAIM_TIMEOUT);
        }
        assertTrue(a.size() < 4_000, "expired keys were swept as new ones arrived, size=" + a.size());
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }
}
