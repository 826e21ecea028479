package io.quarkiverse.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * What the store answered to a claim.
 *
 * @param result the answer
 * @param attempts how many attempts of the key have failed before this one (0 for a new key)
 * @param busyFor for {@link ClaimResult#BUSY}, how long the other delivery's lease still runs, when the store knows;
 *        {@code null} otherwise
 * @param reason for {@link ClaimResult#DEAD_LETTERED}, the last failure recorded for the key, when the store knows;
 *        {@code null} otherwise
 * @param seen for {@link ClaimResult#DONE}, what the store kept about the message that wrote the key (its id and
 *        payload fingerprint); {@link MessageFacts#NONE} when it does not know
 * @param age for {@link ClaimResult#DONE}, how long ago the key was confirmed (its retention runs from then), when the
 *        store knows; {@code null} otherwise
 */
public record Claim(ClaimResult result, int attempts, Duration busyFor, String reason, MessageFacts seen, Duration age) {

    /** A confirmed key: a duplicate. */
    public static final Claim DONE = new Claim(ClaimResult.DONE, 0, null, null);

    /** Another delivery holds the key, for how long is not known. */
    public static final Claim BUSY = new Claim(ClaimResult.BUSY, 0, null, null);

    /** A claim whose lease ran out holds the key: take it over on a lease, outside the transaction. */
    public static final Claim EXPIRED = new Claim(ClaimResult.EXPIRED, 0, null, null);

    public Claim {
        Objects.requireNonNull(result, "result");
        seen = seen == null ? MessageFacts.NONE : seen;
    }

    /** A claim's answer without what the store knows of the message that wrote the key. */
    public Claim(ClaimResult result, int attempts, Duration busyFor, String reason) {
        this(result, attempts, busyFor, reason, MessageFacts.NONE, null);
    }

    /** @return a confirmed key (a duplicate), written by the message {@code seen}, confirmed {@code age} ago */
    public static Claim done(MessageFacts seen, Duration age) {
        return new Claim(ClaimResult.DONE, 0, null, null, seen, age);
    }

    /** @return a new claim on a key with that many failed attempts before */
    public static Claim claimed(ClaimResult result, int attempts) {
        return new Claim(result, attempts, null, null);
    }

    /** @return another delivery's claim, whose lease runs for that long still */
    public static Claim busyFor(Duration leaseLeft) {
        return new Claim(ClaimResult.BUSY, 0, leaseLeft, null);
    }

    /** @return a key dead-lettered after that many failed attempts, the last one for that reason */
    public static Claim deadLettered(int attempts, String reason) {
        return new Claim(ClaimResult.DEAD_LETTERED, attempts, null, reason);
    }

    /** @return whether this delivery now holds the key and must run the handler */
    public boolean claimed() {
        return result.claimed();
    }
}
