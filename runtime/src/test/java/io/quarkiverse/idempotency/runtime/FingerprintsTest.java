package io.quarkiverse.idempotency.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

class FingerprintsTest {

    record Order(String id, long cents) {
    }

    @Test
    void aPayloadHasTheFingerprintOfItsBytesWhateverItsForm() {
        String text = "{\"order\":\"o-1\",\"cents\":100}";
        String expected = Fingerprints.of(text.getBytes(StandardCharsets.UTF_8));
        assertEquals(22, expected.length());
        assertEquals(expected, Fingerprints.of(text));
        assertEquals(expected, Fingerprints.of(text.getBytes(StandardCharsets.UTF_8)));
        assertEquals(expected, Fingerprints.of(Buffer.buffer(text)));
        assertEquals(expected, Fingerprints.of(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8))));
        assertEquals(expected, Fingerprints.of(new JsonObject(text)));
        assertEquals(expected, Fingerprints.of(Message.of(text)));
    }

    @Test
    void differentPayloadsHaveDifferentFingerprints() {
        assertNotEquals(Fingerprints.of("{\"order\":\"o-1\",\"cents\":100}"),
                Fingerprints.of("{\"order\":\"o-1\",\"cents\":900}"));
        assertNotEquals(Fingerprints.of(100L), Fingerprints.of(100));
    }

    @Test
    void aPayloadWithoutACanonicalFormHasNone() {
        assertNull(Fingerprints.of(new Order("o-1", 100)));
        assertNull(Fingerprints.of((Object) null));
    }
}
