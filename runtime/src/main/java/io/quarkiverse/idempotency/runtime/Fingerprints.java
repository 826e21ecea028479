package io.quarkiverse.idempotency.runtime;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
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
    /**
     * A digest per thread, made on the thread's first message: looking one up per message went through the security
     * providers each time (a profile's 1% of a consumer's time). The digests are made at run time, on the threads that
     * use them: a native image initializing this class at build time holds only the empty thread-local.
     */
    private static final ThreadLocal<MessageDigest> DIGESTS = ThreadLocal.withInitial(Fingerprints::sha256);

    private Fingerprints() {
    }

    /** @return the fingerprint of the payload, or {@code null} when it has no canonical byte form */
    static String of(Object payload) {
        byte[] bytes = canonical(payload);
        return bytes == null ? null : of(bytes);
    }

    /** @return the fingerprint of those bytes */
    static String of(byte[] bytes) {
        // digest() resets the digest: the thread's one is ready for its next message
        byte[] hash = DIGESTS.get().digest(bytes);
        return BASE64.encodeToString(Arrays.copyOf(hash, 16));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
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
