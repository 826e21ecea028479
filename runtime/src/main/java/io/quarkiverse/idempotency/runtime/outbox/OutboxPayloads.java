package io.quarkiverse.idempotency.runtime.outbox;

import java.nio.charset.StandardCharsets;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * How an outgoing payload is stored in the outbox and read back before a re-send: strings as UTF-8, bytes and buffers
 * as they are, Vert.x JSON as its text, any other object as JSON (Jackson, through Vert.x's codec) read back as its
 * class, so that the channel serializes what the relay sends as it would the original.
 */
final class OutboxPayloads {

    static final String STRING = "string";
    static final String BYTES = "bytes";
    static final String BUFFER = "buffer";
    static final String JSON_OBJECT = "json-object";
    static final String JSON_ARRAY = "json-array";

    private OutboxPayloads() {
    }

    /** @return how the payload is stored: one of the kinds above, or the name of its class when stored as JSON */
    static String kind(Object payload) {
        if (payload instanceof String) {
            return STRING;
        } else if (payload instanceof byte[]) {
            return BYTES;
        } else if (payload instanceof Buffer) {
            return BUFFER;
        } else if (payload instanceof JsonObject) {
            return JSON_OBJECT;
        } else if (payload instanceof JsonArray) {
            return JSON_ARRAY;
        }
        return payload.getClass().getName();
    }

    static byte[] encode(Object payload) {
        if (payload == null) {
            throw new IllegalArgumentException("An outbox message needs a payload, not null");
        }
        if (payload instanceof String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        } else if (payload instanceof byte[] b) {
            return b;
        } else if (payload instanceof Buffer b) {
            return b.getBytes();
        } else if (payload instanceof JsonObject o) {
            return o.toBuffer().getBytes();
        } else if (payload instanceof JsonArray a) {
            return a.toBuffer().getBytes();
        }
        try {
            return Json.encodeToBuffer(payload).getBytes();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("The outbox stores a payload of " + payload.getClass().getName()
                    + " as JSON, and it could not be written as JSON (is quarkus-jackson present?): " + e.getMessage(), e);
        }
    }

    static Object decode(String kind, byte[] stored) {
        return switch (kind) {
            case STRING -> new String(stored, StandardCharsets.UTF_8);
            case BYTES -> stored;
            case BUFFER -> Buffer.buffer(stored);
            case JSON_OBJECT -> new JsonObject(Buffer.buffer(stored));
            case JSON_ARRAY -> new JsonArray(Buffer.buffer(stored));
            default -> Json.decodeValue(Buffer.buffer(stored), classOf(kind));
        };
    }

    /** Found each time (on the relay's path only): a class reloaded in dev mode is the new one. */
    private static Class<?> classOf(String name) {
        try {
            return Class.forName(name, false, Thread.currentThread().getContextClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("An outbox row holds a payload of " + name
                    + ", a class this application does not have (in a native image: not registered for reflection;"
                    + " send the type the OutboxEmitter declares)", e);
        }
    }
}
