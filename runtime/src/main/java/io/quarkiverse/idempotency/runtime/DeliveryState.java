package io.quarkiverse.idempotency.runtime;

/**
 * Where a delivery is in its life; the states from {@link #DUPLICATE} on end it, each counted as an
 * {@link Outcome} except {@link #ABANDONED}.
 *
 * <pre>
 *   KEYED ──claim()──────────────▶ CLAIMED ──succeeded()──▶ HANDLED | UNCONFIRMED
 *     │        ▲                     │  └─awaitOutputAck()─▶ AWAITING_OUTPUT_ACK ──succeeded()──▶ HANDLED
 *     │        └── EXPIRED ◀─┐       └─confirmInTransaction()─▶ CONFIRMED_IN_TRANSACTION ──succeeded()──▶ HANDLED
 *     └─claimInTransaction()─┴────▶ WRITTEN_IN_TRANSACTION ──succeeded()──▶ HANDLED
 *   a claim ─▶ DUPLICATE | PAYLOAD_MISMATCH | BUSY | DEAD_LETTERED       a transaction that rolled back ─▶ ROLLED_BACK
 *   a claim, commits asynchronous ─▶ FOUND_DONE ──a flush──▶ DUPLICATE | PAYLOAD_MISMATCH
 *   any held state ──failed()──▶ RETRYING | DEAD_LETTERED        a claim taken over ─▶ CLAIM_LOST
 *   a failing store ─▶ STORE_FAILED                              a cancelled handler ─▶ ABANDONED
 * </pre>
 *
 * A claim that takes over a dead owner's claim counts the owner's attempt first, so it may end DEAD_LETTERED.
 */
public enum DeliveryState {
    /** The key is computed; nothing is claimed yet. */
    KEYED,
    /** A dead owner's claim holds the key: it is taken over on a lease, outside the handler's transaction. */
    EXPIRED,
    /** A lease-mode claim is held (renewed while the handler runs). */
    CLAIMED,
    /**
     * The key was found confirmed on a channel that commits asynchronously: a duplicate once a WAL flush passed that
     * commit.
     */
    FOUND_DONE,
    /** The key is written as confirmed in the handler's transaction, not committed yet. */
    WRITTEN_IN_TRANSACTION,
    /** The lease-mode claim is confirmed in the handler's transaction, not committed yet. */
    CONFIRMED_IN_TRANSACTION,
    /** The claim was found taken over when confirming in the handler's transaction, which then rolls back. */
    LOST_IN_TRANSACTION,
    /** A processor returned; its key is confirmed once its output is acknowledged downstream. */
    AWAITING_OUTPUT_ACK,
    /** The handler's transaction rolled back (with or without an exception): the attempt failed. */
    ROLLED_BACK,
    /** The key was confirmed before: acked without running. */
    DUPLICATE(Outcome.DUPLICATE),
    /** The key was confirmed for a different payload, and such duplicates are dead-lettered: dead-lettered. */
    PAYLOAD_MISMATCH(Outcome.PAYLOAD_MISMATCH),
    /** Another delivery holds the key: redelivered later. */
    BUSY(Outcome.BUSY),
    /** The work is done and the key confirmed: acked. */
    HANDLED(Outcome.HANDLED),
    /** The work is done but the store failed to confirm the key: acked; a later duplicate may run again. */
    UNCONFIRMED(Outcome.UNCONFIRMED),
    /** The attempt failed and was counted: redelivered after a delay. */
    RETRYING(Outcome.RETRYING),
    /** The last attempt of the budget failed, or the key was dead-lettered before: dead-lettered. */
    DEAD_LETTERED(Outcome.DEAD_LETTERED),
    /** The store failed: redelivered later, nothing counted. */
    STORE_FAILED(Outcome.STORE_FAILED),
    /** The claim was taken over by another delivery before this one finished: redelivered later. */
    CLAIM_LOST(Outcome.CLAIM_LOST),
    /** The handler's result was cancelled: its outcome is unknown, its claim left to run out. */
    ABANDONED(null);

    private final Outcome outcome;
    private final boolean ended;

    DeliveryState() {
        this.outcome = null;
        this.ended = false;
    }

    DeliveryState(Outcome outcome) {
        this.outcome = outcome;
        this.ended = true;
    }

    /** @return whether the handler's transaction holds the key's outcome: its rollback is a failed attempt */
    boolean heldByTransaction() {
        return this == WRITTEN_IN_TRANSACTION || this == CLAIMED || this == CONFIRMED_IN_TRANSACTION;
    }

    /** @return whether the delivery has ended: its outcome is decided */
    public boolean ended() {
        return ended;
    }

    /** @return how an ended delivery is counted, or {@code null} when it is not (still running, abandoned) */
    public Outcome outcome() {
        return outcome;
    }
}
