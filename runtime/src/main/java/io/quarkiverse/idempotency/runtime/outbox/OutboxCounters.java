package io.quarkiverse.idempotency.runtime.outbox;

import java.util.concurrent.atomic.LongAdder;

/** The outbox's counts as they are kept, by the threads that send and relay (see {@link OutboxCounts}). */
final class OutboxCounters {

    final LongAdder sentAtOnce = new LongAdder();
    final LongAdder relayed = new LongAdder();
    final LongAdder relayRunsStarted = new LongAdder();
    final LongAdder relayRunsEnded = new LongAdder();
    final LongAdder afterCommitsHandled = new LongAdder();
    final LongAdder failures = new LongAdder();

    OutboxCounts now() {
        return new OutboxCounts(sentAtOnce.sum(), relayed.sum(), relayRunsStarted.sum(), relayRunsEnded.sum(),
                afterCommitsHandled.sum(), failures.sum());
    }
}
