package io.quarkiverse.idempotency.test.store;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.runtime.WorkerId;

/**
 * A worker id names the host and the process, and differs at every start, so that a restarted process never takes its
 * dead predecessor's claims for live ones of its own.
 */
class WorkerIdTest {

    @Test
    void hostPidAndARandomPartUniquePerStart() {
        WorkerId first = new WorkerId();
        WorkerId second = new WorkerId();
        String pid = String.valueOf(ProcessHandle.current().pid());
        assertTrue(first.value().contains(":" + pid + ":"), first.value());
        assertNotEquals(first.value(), second.value(), "two starts of the same process on the same host differ");
        assertTrue(first.value().length() <= 100, "fits the claimed_by column: " + first.value());
    }
}
