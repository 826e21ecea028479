package io.quarkiverse.idempotency.runtime.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.ScopedKey;

/** A processor's output id: the same for one key and channel, another for any other scope, key or channel. */
class OutputIdTest {

    @Test
    void oneKeyAndChannelOneIdAndNoTwoDifferentOnesShareIt() {
        String id = Outbox.outputId(new ScopedKey("orders", "m-1"), "receipts");
        assertEquals(id, Outbox.outputId(new ScopedKey("orders", "m-1"), "receipts"));
        assertEquals(id, UUID.fromString(id).toString(), "a UUID");
        assertNotEquals(id, Outbox.outputId(new ScopedKey("orders", "m-2"), "receipts"));
        assertNotEquals(id, Outbox.outputId(new ScopedKey("refunds", "m-1"), "receipts"));
        assertNotEquals(id, Outbox.outputId(new ScopedKey("orders", "m-1"), "notices"));
        // the parts cannot run into each other
        assertNotEquals(Outbox.outputId(new ScopedKey("a\nb", "c"), "x"), Outbox.outputId(new ScopedKey("a", "b\nc"), "x"));
        assertNotEquals(Outbox.outputId(new ScopedKey("a1", "2"), "x"), Outbox.outputId(new ScopedKey("a", "12"), "x"));
        assertNotEquals(Outbox.outputId(new ScopedKey("a", "b"), "cd"), Outbox.outputId(new ScopedKey("a", "bc"), "d"));
    }
}
