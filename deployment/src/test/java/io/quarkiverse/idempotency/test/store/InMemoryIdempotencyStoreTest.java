package io.quarkiverse.idempotency.test.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore.HeldClaim;
import io.quarkiverse.idempotency.InMemoryIdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * The in-memory store's semantics, with a clock the test moves. Tokens stand for claims: "a1" and "a2" are two
 * deliveries of one process, "b" a delivery elsewhere.
 */
class InMemoryIdempotencyStoreTest {

    static final Duration RETENTION = Duration.ofHours(1);
    static final Duration LEASE = Duration.ofSeconds(30);

    final AtomicLong now = new AtomicLong(1_000_000_000L);
    final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(now::get);

    @Test
    void claimAnswersNewThenBusyThenDone() {
        assertEquals(ClaimResult.NEW, claim("k", "a1"));
        assertEquals(ClaimResult.BUSY, claim("k", "b"));
        assertTrue(store.confirm(key("k"), "a1", RETENTION));
        assertEquals(ClaimResult.DONE, claim("k", "b"));
        assertEquals(ClaimResult.DONE, claim("k", "a2"));
    }

    @Test
    void busyTellsHowLongTheHoldersLeaseRuns() {
        claim("k", "a1");
        advance(Duration.ofSeconds(10));
        Duration left = store.claim(key("k"), "b", LEASE, RETENTION).busyFor();
        assertNotNull(left);
        assertEquals(20, left.toSeconds());
    }

    @Test
    void scopesNeverCollide() {
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("orders", "A-1"), "a1", LEASE, RETENTION).result());
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("invoices", "A-1"), "a2", LEASE, RETENTION).result());
    }

    @Test
    void aClaimWhoseLeaseRanOutIsTakenOverButAConfirmedKeyNeverIs() {
        claim("stale", "a1");
        claim("done", "a2");
        store.confirm(key("done"), "a2", RETENTION);
        advance(LEASE.plusSeconds(1));
        assertEquals(ClaimResult.TAKEN_OVER, claim("stale", "b"));
        assertEquals(ClaimResult.DONE, claim("done", "b"));
    }

    @Test
    void fencingIsPerClaimEvenWithinOneProcess() {
        claim("k", "a1");
        advance(LEASE.plusSeconds(1));
        assertEquals(ClaimResult.TAKEN_OVER, claim("k", "a2"), "a later delivery of the same process takes it over");
        assertFalse(store.confirm(key("k"), "a1", RETENTION), "fenced: the claim is a2's now");
        assertFalse(store.release(key("k"), "a1"), "fenced: the claim is a2's now");
        assertEquals(0, store.recordFailure(key("k"), "a1", "boom", 5, RETENTION), "fenced: a2's claim is not counted");
        assertEquals(ClaimResult.BUSY, claim("k", "b"), "a2's claim still stands");
        assertTrue(store.confirm(key("k"), "a2", RETENTION));
    }

    @Test
    void releaseDeletesOnlyItsOwnUnconfirmedClaim() {
        claim("k", "a1");
        assertFalse(store.release(key("k"), "b"));
        assertTrue(store.release(key("k"), "a1"));
        assertEquals(ClaimResult.NEW, claim("k", "b"));
        store.confirm(key("k"), "b", RETENTION);
        assertFalse(store.release(key("k"), "b"), "a confirmed key is never released");
    }

    @Test
    void failedAttemptsAreCountedUntilTheBudgetIsSpentAndAReleasedKeyStartsAgain() {
        assertEquals(ClaimResult.NEW, claim("k", "a1"));
        assertEquals(1, store.recordFailure(key("k"), "a1", "boom 1", 3, RETENTION));
        var second = store.claim(key("k"), "a2", LEASE, RETENTION);
        assertEquals(ClaimResult.NEW, second.result(), "a failed key is free to try again, at once");
        assertEquals(1, second.attempts(), "the retry knows one attempt failed before");
        assertEquals(2, store.recordFailure(key("k"), "a2", "boom 2", 3, RETENTION));
        assertEquals(2, store.claim(key("k"), "b", LEASE, RETENTION).attempts(), "shared by every delivery");
        assertEquals(3, store.recordFailure(key("k"), "b", "boom 3", 3, RETENTION));
        assertTrue(store.describe().get(key("k")).startsWith("DEAD_LETTERED after 3 failed attempts: boom 3"));
        var again = store.claim(key("k"), "c", LEASE, RETENTION);
        assertEquals(ClaimResult.DEAD_LETTERED, again.result(), "a dead-lettered key stays dead-lettered");
        assertEquals("boom 3", again.reason(), "with the original reason");
        assertEquals(3, again.attempts(), "no new budget");
        assertTrue(store.releaseDeadLetter(key("k")), "an operator releases it");
        var replay = store.claim(key("k"), "d", LEASE, RETENTION);
        assertEquals(ClaimResult.NEW, replay.result(), "then a replay from the dead-letter queue runs");
        assertEquals(0, replay.attempts(), "with a fresh budget");
    }

    @Test
    void aFailureWithoutAClaimIsCountedOnAFreshRecord() {
        // an in-transaction delivery's key rolled back with its transaction: nothing to update
        assertEquals(1, store.recordFailure(key("k"), "a1", "boom", 5, RETENTION));
        assertEquals(1, store.claim(key("k"), "a2", LEASE, RETENTION).attempts());
    }

    @Test
    void releasingARetrysClaimKeepsItsCount() {
        claim("k", "a1");
        store.recordFailure(key("k"), "a1", "boom", 5, RETENTION);
        claim("k", "a2");
        assertTrue(store.release(key("k"), "a2"));
        assertEquals(1, store.claim(key("k"), "b", LEASE, RETENTION).attempts());
    }

    @Test
    void renewalKeepsASlowLiveClaimFromBeingTakenOver() {
        claim("slow", "a1");
        advance(LEASE.minusSeconds(10));
        store.renew(List.of(new HeldClaim(key("slow"), "a1", LEASE)));
        advance(Duration.ofSeconds(20));
        assertEquals(ClaimResult.BUSY, claim("slow", "b"));
    }

    @Test
    void renewalIsFencedToo() {
        claim("k", "a1");
        advance(LEASE.minusSeconds(1));
        store.renew(List.of(new HeldClaim(key("k"), "b", LEASE)));
        advance(Duration.ofSeconds(2));
        assertEquals(ClaimResult.TAKEN_OVER, claim("k", "b"), "another token's renewal did not extend a1's lease");
    }

    @Test
    void theWindowSlidesKeysAreForgottenAfterRetention() {
        claim("old", "a1");
        store.confirm(key("old"), "a1", RETENTION);
        advance(RETENTION.plusSeconds(1));
        claim("young", "a2");
        assertEquals(1, store.purgeExpired(100), "only the expired key is purged");
        assertEquals(ClaimResult.NEW, claim("old", "b"), "remembered no longer");
        assertEquals(ClaimResult.BUSY, claim("young", "c"));
    }

    @Test
    void expiredKeysAreSweptWithoutATimer() {
        for (int i = 0; i < 2_000; i++) {
            store.claim(key("k" + i), "a" + i, LEASE, Duration.ofSeconds(1));
        }
        advance(Duration.ofSeconds(2));
        for (int i = 0; i < 2_000; i++) {
            store.claim(key("fresh" + i), "b" + i, LEASE, RETENTION);
        }
        assertTrue(store.size() < 4_000, "expired keys were swept as new ones arrived, size=" + store.size());
    }

    private ClaimResult claim(String key, String token) {
        return store.claim(key(key), token, LEASE, RETENTION).result();
    }

    private static ScopedKey key(String key) {
        return new ScopedKey("s", key);
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }
}
