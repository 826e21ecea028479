package io.quarkiverse.idempotency.runtime.outbox;

/**
 * What the outbox has done since the start, as read at one moment, for metrics, the Dev UI and tests that wait for it.
 *
 * @param sentAtOnce messages sent just after their transaction committed
 * @param relayed messages sent by the relay (after a crash, a refusal, or from another instance)
 * @param relayRunsStarted the relay's runs started so far (the job's, and each "send now")
 * @param relayRunsEnded the relay's runs ended so far, whether they sent, found nothing, or failed
 * @param afterCommitsHandled the committed transactions whose messages the fast path has handled: sent (their confirms
 *        may still be on their way), left to the relay, or found gone after an asynchronous commit
 * @param failures sendings the broker refused or that failed
 */
public record OutboxCounts(long sentAtOnce, long relayed, long relayRunsStarted, long relayRunsEnded,
        long afterCommitsHandled, long failures) {
}
