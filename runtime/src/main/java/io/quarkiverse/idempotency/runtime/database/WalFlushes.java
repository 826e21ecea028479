package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The WAL flushes that asynchronously committed deliveries wait for: one transaction with a synchronous commit, shared
 * by every caller waiting at that moment, whose commit returns once the WAL is flushed up to its own record, so past
 * the commit of each caller (which returned before the caller asked). Its statement also reads which of the callers'
 * keys are confirmed: a row its snapshot sees was committed before the flush's record, so is durable once the flush
 * commits. After a crash and restart of the server, the flush succeeds on the new server while the commit it was meant
 * to wait for may be gone: only the row tells.
 */
final class WalFlushes {

    private final KeyTable table;
    private final KeyProtocol protocol;
    private final GroupCommit<List<String>, Boolean> flushes = new GroupCommit<>(this::flush, 4096);

    WalFlushes(KeyTable table, KeyProtocol protocol) {
        this.table = table;
        this.protocol = protocol;
    }

    /** Returns once every commit before this call is durable. */
    void await() {
        flushes.submit(List.of());
    }

    /**
     * @param ids stored keys (a key in each form it may be stored under)
     * @return once every commit before this call is durable, whether one of them is confirmed
     */
    boolean awaitConfirmed(List<String> ids) {
        return flushes.submit(ids);
    }

    /** @return how many flushes ran, and how many callers they served */
    long[] statistics() {
        return flushes.statistics();
    }

    private List<Boolean> flush(List<List<String>> batch) {
        Set<String> asked = new LinkedHashSet<>();
        for (List<String> ids : batch) {
            asked.addAll(ids);
        }
        Set<String> confirmed = table.transaction(
                c -> JdbcCalls.answered(c, db -> protocol.confirmedOnceFlushed(db, asked)),
                "Could not flush the WAL");
        List<Boolean> answers = new ArrayList<>(batch.size());
        for (List<String> ids : batch) {
            boolean any = ids.isEmpty(); // a plain flush asks for no key
            for (String id : ids) {
                any |= confirmed.contains(id);
            }
            answers.add(any);
        }
        return answers;
    }
}
