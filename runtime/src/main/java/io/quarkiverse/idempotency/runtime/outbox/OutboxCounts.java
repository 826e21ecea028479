package io.quarkiverse.idempotency.runtime.outbox;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the outbox has done since the start, for metrics, the Dev UI and tests that wait for it.
 */
public final class OutboxCounts {

    final LongAdder sentAtOnce = new LongAdder();
    final LongAdder relayed = new LongAdder();
    final LongAdder relayRunsStarted = new LongAdder();
    final LongAdder relayRunsEnded = new LongAdder();
    final LongAdder failures = new LongAdder();
    final LongAdder afterCommitsHandled = new LongAdder();

    /** @return messages sent just after their transaction committed */
    public long sentAtOnce() {
        return sentAtOnce.sum();
    }

    /** @return messages sent by the relay (after a crash, a refusal, or from another instance) */
    public long relayed() {
        return relayed.sum();
    }

    /** @return the relay's runs started so far (the job's, and each "send now") */
    public long relayRunsStarted() {
        return relayRunsStarted.sum();
    }

    /** @return the relay's runs ended so far, whether they sent, found nothing, or failed */
    public long relayRunsEnded() {
        return relayRunsEnded.sum();
    }

    /**
     * @return the committed transactions whose messages the fast path has handled: sent (their confirms may still be
     *         on their way), left to the relay, or found gone after an asynchronous commit
     */
    public long afterCommitsHandled() {
        return afterCommitsHandled.sum();
    }

    /** @return sendings the broker refused or that failed */
    public long failures() {
        return failures.sum();
    }
}
