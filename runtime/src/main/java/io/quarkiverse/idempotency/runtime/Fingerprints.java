package io.quarkiverse.idempotency.runtime;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.UUID;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * A payload's fingerprint: the first 128 bits of its SHA-256, base64url (22 characters). Computed from the bytes the
 * broker delivered when the connector has them (RabbitMQ), else from the payload the method receives when it has a
 * canonical byte form ({@code byte[]}, {@code String}, Vert.x {@code Buffer}, {@code JsonObject} and
 * {@code JsonArray} as encoded, {@code ByteBuffer}, numbers, booleans, enums, UUIDs); any other payload has none, and
 * its duplicates are compared by id only.
 */
final class Fingerprints {

    private static final Base64.Encoder BASE64 = Base64.getUrlEncoder().withoutPadding();

    private Fingerprints() {
    }

    /** @return the fingerprint of the payload, or {@code null} when it has no canonical byte form */
    static String of(Object payload) {
        byte[] bytes = canonical(payload);
        return bytes == null ? null : of(bytes);
    }

    /** @return the fingerprint of those bytes */
    static String of(byte[] bytes) {
        return BASE64.encodeToString(Arrays.copyOf(Sha256.of(bytes), 16));
    }

    private static byte[] canonical(Object payload) {
        if (payload instanceof Message<?> message) {
            payload = message.getPayload();
        }
        if (payload instanceof byte[] bytes) {
            return bytes;
        }
        if (payload instanceof CharSequence text) {
            return text.toString().getBytes(StandardCharsets.UTF_8);
        }
        if (payload instanceof Buffer buffer) {
            return buffer.getBytes();
        }
        if (payload instanceof io.vertx.mutiny.core.buffer.Buffer buffer) {
            return buffer.getBytes();
        }
        if (payload instanceof JsonObject json) {
            return json.encode().getBytes(StandardCharsets.UTF_8);
        }
        if (payload instanceof JsonArray json) {
            return json.encode().getBytes(StandardCharsets.UTF_8);
        }
        if (payload instanceof ByteBuffer buffer) {
            ByteBuffer copy = buffer.duplicate();
            byte[] bytes = new byte[copy.remaining()];
            copy.get(bytes);
            return bytes;
        }
        if (payload instanceof Number || payload instanceof Boolean || payload instanceof Character
                || payload instanceof Enum<?> || payload instanceof UUID) {
            return (payload.getClass().getName() + ':' + payload).getBytes(StandardCharsets.UTF_8);
        }
        return null;
    }
}
