package io.quarkiverse.idempotency.test.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;

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

    @Test
    void anInstanceNameAndAnIncarnationUniquePerStart() {
        WorkerId first = new WorkerId(Optional.of("payments-7"));
        WorkerId second = new WorkerId(Optional.of("payments-7"));
        assertEquals("payments-7", first.instance());
        assertTrue(first.value().startsWith("payments-7@"), first.value());
        assertNotEquals(first.value(), second.value(), "each start of the instance is an incarnation of its own");
        assertFalse(second.value().startsWith(first.value() + "#"), "no start's tokens begin like another's");
        assertNull(new WorkerId().instance(), "without a name, nothing is taken back at startup");
    }

    @Test
    void anInstanceNameThatCannotBeToldApartIsRefused() {
        for (String name : new String[] { "", " ", "pod@1", "pod#1", "p".repeat(65) }) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> new WorkerId(Optional.of(name)));
            assertTrue(refused.getMessage().contains("quarkus.idempotency.instance-id"), refused.getMessage());
        }
    }
}
