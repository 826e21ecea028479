package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The tokens that fence claims: each lease-mode claim gets one of its own (this process's worker id and a sequence
 * number), so that a delivery whose claim was taken over, even by a later delivery in this process, changes nothing.
 */
final class ClaimTokens {

    private final String worker;
    private final AtomicLong claims = new AtomicLong();

    ClaimTokens(String worker) {
        this.worker = worker;
    }

    /** @return a token for one claim, unique to it */
    String next() {
        return worker + "#" + Long.toString(claims.incrementAndGet(), 36);
    }

    /** @return this process's worker id: the owner recorded on keys written in a transaction (they need no fence) */
    String worker() {
        return worker;
    }
}
