package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.atomic.AtomicBoolean;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * One delivery of one message to an {@code @Idempotent} method: its key, what the claim answered, and what the
 * handler's transaction did. Shared by the two interceptors of one invocation through the invocation's context data.
 */
public final class Delivery {

    /** The invocation context data key under which the outer interceptor leaves the delivery for the inner one. */
    public static final String CONTEXT_KEY = Delivery.class.getName();

    private final MethodPlan plan;
    private final String channel;
    private final ScopedKey key;
    private volatile ClaimResult claim;
    private final boolean claimInTransaction;
    private final AtomicBoolean settled = new AtomicBoolean();
    private final long startedAt;
    private volatile long renewedAt;
    private volatile boolean confirmedInTransaction;
    private volatile boolean claimLost;
    private volatile Boolean committed;

    Delivery(MethodPlan plan, String channel, ScopedKey key, ClaimResult claim, long now) {
        this.plan = plan;
        this.channel = channel;
        this.key = key;
        this.claim = claim;
        this.claimInTransaction = claim == null;
        this.startedAt = now;
        this.renewedAt = now;
    }

    public MethodPlan plan() {
        return plan;
    }

    public String channel() {
        return channel;
    }

    public ScopedKey key() {
        return key;
    }

    /** @return the claim's answer; {@code null} while a claim to be made inside the handler's transaction is pending */
    public ClaimResult claim() {
        return claim;
    }

    /** @return whether the key is claimed inside the handler's transaction (the opt-in mode) */
    public boolean claimsInTransaction() {
        return claimInTransaction;
    }

    void claimed(ClaimResult result) {
        this.claim = result;
    }

    /** Called by the inner interceptor once the key is confirmed in the handler's transaction. */
    public void confirmedInTransaction() {
        this.confirmedInTransaction = true;
    }

    /** Called by the inner interceptor when confirming found the claim taken over. */
    public void claimLost() {
        this.claimLost = true;
    }

    /** Called when the handler's transaction completed. */
    public void transactionCompleted(boolean committed) {
        this.committed = committed;
    }

    boolean isConfirmedInTransaction() {
        return confirmedInTransaction && Boolean.TRUE.equals(committed);
    }

    boolean isClaimLost() {
        return claimLost;
    }

    boolean isRolledBack() {
        return Boolean.FALSE.equals(committed);
    }

    /** @return true the first time only: a delivery is confirmed or forgotten once */
    boolean settle() {
        return settled.compareAndSet(false, true);
    }

    long startedAt() {
        return startedAt;
    }

    long renewedAt() {
        return renewedAt;
    }

    void renewedAt(long nanos) {
        this.renewedAt = nanos;
    }
}
