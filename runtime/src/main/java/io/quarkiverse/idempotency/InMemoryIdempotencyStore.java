package io.quarkiverse.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

import io.quarkiverse.idempotency.runtime.SynchronousStore;

/**
 * An {@link IdempotencyStore} in this process's memory, with a sliding window: a key is remembered for its retention
 * and then forgotten.
 * <p>
 * Correct for one process only, so right for tests and dev mode and wrong for production, where two consumer
 * processes each with their own memory is exactly the case idempotency exists for. It does not join transactions:
 * a key is confirmed after the handler's transaction committed.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore, SynchronousStore {

    private static final int MIN_SWEEP_INTERVAL = 1024;

    private enum State {
        CLAIMED,
        CONFIRMED,
        FAILED,
        DEAD_LETTERED
    }

    private final ConcurrentHashMap<ScopedKey, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicInteger claimsSinceSweep = new AtomicInteger();
    private volatile int sizeAtLastSweep;
    private final LongSupplier nanoClock;
    // The wall-clock time of the nano clock's origin reading, to tell operators when things happened.
    private final Instant wallAtStart = Instant.now();
    private final long nanosAtStart;

    public InMemoryIdempotencyStore() {
        this(System::nanoTime);
    }

    /**
     * @param nanoClock a monotonic clock in nanoseconds (tests move time forward with it)
     */
    public InMemoryIdempotencyStore(LongSupplier nanoClock) {
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.nanosAtStart = nanoClock.getAsLong();
    }

    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
        return claim(key, token, lease, retention, MessageFacts.NONE);
    }

    /** Keeps the message's facts with a key it claims, and answers a confirmed key with its facts and age. */
    @Override
    public Claim claim(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
        long now = nanoClock.getAsLong();
        Claim[] result = new Claim[1];
        entries.compute(key, (k, e) -> {
            if (e == null || e.expiresAt() - now <= 0) {
                result[0] = Claim.claimed(ClaimResult.NEW, 0);
                return entry(State.CLAIMED, token, now + lease.toNanos(), now + retention.toNanos(), 0, null,
                        facts);
            }
            switch (e.state()) {
                case CONFIRMED:
                    result[0] = Claim.done(e.facts(), Duration.ofNanos(now - e.claimedAt()));
                    return e;
                case CLAIMED:
                    if (e.leaseUntil() - now > 0) {
                        result[0] = Claim.busyFor(Duration.ofNanos(e.leaseUntil() - now));
                        return e;
                    }
                    result[0] = Claim.claimed(ClaimResult.TAKEN_OVER, e.attempts());
                    return entry(State.CLAIMED, token, now + lease.toNanos(), now + retention.toNanos(),
                            e.attempts(), e.lastFailure(), facts);
                case DEAD_LETTERED:
                    result[0] = Claim.deadLettered(e.attempts(), e.lastFailure());
                    return e;
                default:
                    result[0] = Claim.claimed(ClaimResult.NEW, e.attempts());
                    return entry(State.CLAIMED, token, now + lease.toNanos(), now + retention.toNanos(), e.attempts(),
                            e.lastFailure(), facts);
            }
        });
        if (result[0].result() == ClaimResult.NEW) {
            maybeSweep();
        }
        return result[0];
    }

    @Override
    public Claim peek(ScopedKey key) {
        long now = nanoClock.getAsLong();
        Entry e = entries.get(key);
        if (e == null || e.expiresAt() - now <= 0) {
            return Claim.claimed(ClaimResult.NEW, 0);
        }
        return switch (e.state()) {
            case CONFIRMED -> Claim.done(e.facts(), Duration.ofNanos(now - e.claimedAt()));
            case DEAD_LETTERED -> Claim.deadLettered(e.attempts(), e.lastFailure());
            case CLAIMED -> e.leaseUntil() - now > 0 ? Claim.busyFor(Duration.ofNanos(e.leaseUntil() - now))
                    : Claim.claimed(ClaimResult.NEW, e.attempts());
            default -> Claim.claimed(ClaimResult.NEW, e.attempts());
        };
    }

    @Override
    public boolean peeks() {
        return true;
    }

    @Override
    public boolean neverBlocks() {
        return true;
    }

    @Override
    public boolean confirm(ScopedKey key, String token, Duration retention) {
        long now = nanoClock.getAsLong();
        boolean[] done = new boolean[1];
        entries.computeIfPresent(key, (k, e) -> {
            if (!e.heldBy(token)) {
                return e;
            }
            done[0] = true;
            return entry(State.CONFIRMED, token, 0, now + retention.toNanos(), e.attempts(), e.lastFailure(), e.facts());
        });
        return done[0];
    }

    @Override
    public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
        long now = nanoClock.getAsLong();
        int[] counted = new int[1];
        entries.compute(key, (k, e) -> {
            int before;
            if (e == null || e.expiresAt() - now <= 0) {
                before = 0;
            } else if (e.heldBy(token) || e.state() == State.FAILED) {
                before = e.attempts();
            } else {
                return e; // confirmed, dead-lettered, or another delivery's claim
            }
            counted[0] = before + 1;
            long expiresAt = e == null ? now + retention.toNanos() : Math.max(e.expiresAt(), now + retention.toNanos());
            // the facts of the message that claimed it stay, as the database store's row keeps them
            return entry(counted[0] >= maxAttempts ? State.DEAD_LETTERED : State.FAILED, token, 0, expiresAt,
                    counted[0], failure, e == null || e.expiresAt() - now <= 0 ? MessageFacts.NONE : e.facts());
        });
        return counted[0];
    }

    @Override
    public boolean release(ScopedKey key, String token) {
        boolean[] done = new boolean[1];
        entries.computeIfPresent(key, (k, e) -> {
            if (!e.heldBy(token)) {
                return e;
            }
            done[0] = true;
            return e.attempts() == 0 ? null : entry(State.FAILED, token, 0, e.expiresAt(), e.attempts(), e.lastFailure());
        });
        return done[0];
    }

    @Override
    public boolean releaseDeadLetter(ScopedKey key) {
        boolean[] done = new boolean[1];
        entries.computeIfPresent(key, (k, e) -> {
            if (e.state() != State.DEAD_LETTERED) {
                return e;
            }
            done[0] = true;
            return entry(State.FAILED, e.token(), 0, e.expiresAt(), 0, e.lastFailure());
        });
        return done[0];
    }

    @Override
    public List<DeadLetter> deadLetters(DeadLetterFilter filter) {
        return deadLettered(filter)
                .sorted(Comparator.comparing(DeadLetter::deadLetteredAt).reversed()
                        .thenComparing(DeadLetter::scope).thenComparing(DeadLetter::key))
                .skip(filter.offset()).limit(filter.limit()).toList();
    }

    @Override
    public int releaseDeadLetters(DeadLetterFilter filter) {
        int released = 0;
        for (DeadLetter dead : deadLettered(filter).toList()) {
            if (releaseDeadLetter(new ScopedKey(dead.scope(), dead.key()))) {
                released++;
            }
        }
        return released;
    }

    private Instant wall(long nanos) {
        return wallAtStart.plusNanos(nanos - nanosAtStart);
    }

    private Stream<DeadLetter> deadLettered(DeadLetterFilter filter) {
        long now = nanoClock.getAsLong();
        return entries.entrySet().stream()
                .filter(e -> e.getValue().state() == State.DEAD_LETTERED && e.getValue().expiresAt() - now > 0)
                .map(e -> {
                    Entry entry = e.getValue();
                    return new DeadLetter(e.getKey().scope(), e.getKey().key(),
                            wall(entry.claimedAt()), entry.attempts(), entry.lastFailure(), entry.facts(),
                            wall(entry.expiresAt()));
                })
                .filter(dead -> filter.matches(dead.scope(), dead.key(), dead.reason(), dead.deadLetteredAt()));
    }

    @Override
    public void renew(Collection<HeldClaim> claims) {
        long now = nanoClock.getAsLong();
        for (HeldClaim held : claims) {
            entries.computeIfPresent(held.key(), (ignored, e) -> !e.heldBy(held.token()) ? e
                    : entry(State.CLAIMED, e.token(), now + held.lease().toNanos(), e.expiresAt(), e.attempts(),
                            e.lastFailure(), e.facts()));
        }
    }

    @Override
    public int purgeExpired(int limit) {
        long now = nanoClock.getAsLong();
        int removed = 0;
        for (Iterator<Map.Entry<ScopedKey, Entry>> it = entries.entrySet().iterator(); it.hasNext() && removed < limit;) {
            Map.Entry<ScopedKey, Entry> e = it.next();
            if (e.getValue().expiresAt() - now <= 0 && entries.remove(e.getKey(), e.getValue())) {
                removed++;
            }
        }
        return removed;
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        long now = nanoClock.getAsLong();
        long oldest = Long.MAX_VALUE;
        boolean found = false;
        for (Entry e : entries.values()) {
            if (e.state() == State.CLAIMED && e.expiresAt() - now > 0 && (!found || e.claimedAt() - oldest < 0)) {
                oldest = e.claimedAt();
                found = true;
            }
        }
        return found ? Optional.of(Duration.ofNanos(now - oldest)) : Optional.empty();
    }

    /**
     * @return a snapshot of the keys held, for display: scope, key, state, attempts and last failure
     */
    public Map<ScopedKey, String> describe() {
        Map<ScopedKey, String> described = new java.util.LinkedHashMap<>();
        entries.forEach((k, e) -> described.put(k, e.state() + (e.attempts() > 0 ? " after " + e.attempts()
                + " failed attempts" + (e.lastFailure() == null ? "" : ": " + e.lastFailure()) : "")));
        return described;
    }

    /** @return the number of keys held, expired ones not yet swept included */
    public int size() {
        return entries.size();
    }

    /** Forgets every key. */
    public void clear() {
        entries.clear();
    }

    // The window slides without a timer: after as many new claims as the store held at the last sweep (at least
    // MIN_SWEEP_INTERVAL), expired keys are swept, which keeps the cost per claim constant however large it grows.
    private void maybeSweep() {
        int since = claimsSinceSweep.incrementAndGet();
        if (since >= Math.max(MIN_SWEEP_INTERVAL, sizeAtLastSweep) && claimsSinceSweep.compareAndSet(since, 0)) {
            purgeExpired(Integer.MAX_VALUE);
            sizeAtLastSweep = entries.size();
        }
    }

    private Entry entry(State state, String token, long leaseUntil, long expiresAt, int attempts, String lastFailure) {
        return entry(state, token, leaseUntil, expiresAt, attempts, lastFailure, MessageFacts.NONE);
    }

    private Entry entry(State state, String token, long leaseUntil, long expiresAt, int attempts, String lastFailure,
            MessageFacts facts) {
        return new Entry(state, token, leaseUntil, expiresAt, attempts, lastFailure, facts, nanoClock.getAsLong());
    }

    private record Entry(State state, String token, long leaseUntil, long expiresAt, int attempts, String lastFailure,
            MessageFacts facts, long claimedAt) {

        boolean heldBy(String claimToken) {
            return state == State.CLAIMED && token.equals(claimToken);
        }
    }
}
