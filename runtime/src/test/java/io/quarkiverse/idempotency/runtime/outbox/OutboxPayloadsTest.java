package io.quarkiverse.idempotency.runtime.outbox;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

class OutboxPayloadsTest {

    @Test
    void payloadsStoredAsTheyAreComeBackEqual() {
        for (Object payload : new Object[] { "receipt \u00e9", new JsonObject().put("orderId", "A-1").put("amountCents", 5),
                new JsonArray().add(1).add("two"), Buffer.buffer("bytes") }) {
            Object back = OutboxPayloads.decode(OutboxPayloads.kind(payload), OutboxPayloads.encode(payload));
            assertEquals(payload, back);
        }
        byte[] bytes = { 0, 1, (byte) 0xff };
        assertArrayEquals(bytes, (byte[]) OutboxPayloads.decode(OutboxPayloads.kind(bytes), OutboxPayloads.encode(bytes)));
    }

    @Test
    void aNullPayloadIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> OutboxPayloads.encode(null));
    }

    @Test
    void aRowNamingAClassTheApplicationLacksSaysSo() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> OutboxPayloads.decode("org.acme.Gone", "{}".getBytes()));
        assertEquals(true, e.getMessage().contains("org.acme.Gone"), e.getMessage());
    }
}
