package io.quarkiverse.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * What the store answered to a claim.
 *
 * @param result the answer
 * @param attempts how many attempts of the key have failed before this one (0 for a new key; a key replayed after it
 *        was dead-lettered starts again from 0)
 * @param busyFor for {@link ClaimResult#BUSY}, how long the other delivery's lease still runs, when the store knows;
 *        {@code null} otherwise
 */
public record Claim(ClaimResult result, int attempts, Duration busyFor) {

    /** A confirmed key: a duplicate. */
    public static final Claim DONE = new Claim(ClaimResult.DONE, 0, null);

    /** Another delivery holds the key, for how long is not known. */
    public static final Claim BUSY = new Claim(ClaimResult.BUSY, 0, null);

    public Claim {
        Objects.requireNonNull(result, "result");
    }

    /** @return a new claim on a key with that many failed attempts before */
    public static Claim claimed(ClaimResult result, int attempts) {
        return new Claim(result, attempts, null);
    }

    /** @return another delivery's claim, whose lease runs for that long still */
    public static Claim busyFor(Duration leaseLeft) {
        return new Claim(ClaimResult.BUSY, 0, leaseLeft);
    }

    /** @return whether this delivery now holds the key and must run the handler */
    public boolean claimed() {
        return result.claimed();
    }
}
