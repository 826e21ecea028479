package io.quarkiverse.idempotency.runtime.database;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.Sha256;

/**
 * Turns a scope and a key into the primary key of the table: {@code scope:key}, with {@code \} and {@code :} escaped
 * in the scope so that no two pairs meet; when that is longer than the column, or could be mistaken for a digest, a
 * SHA-256 digest of it instead.
 */
final class StorageKeys {

    static final String DIGEST_PREFIX = "#sha256:";
    /** The longest stored key; longer scoped keys are stored as a SHA-256 digest. */
    static final int KEY_LENGTH = 255;

    private StorageKeys() {
    }

    static String of(ScopedKey key) {
        return of(key.scope(), key.key());
    }

    static String of(String scope, String key) {
        String plain = escape(scope) + ':' + key;
        // PostgreSQL text cannot hold NUL: such keys are stored as digests too.
        if (plain.length() <= KEY_LENGTH && !plain.startsWith(DIGEST_PREFIX)
                && plain.indexOf('\0') < 0) {
            return plain;
        }
        return DIGEST_PREFIX + HexFormat.of().formatHex(sha256(plain));
    }

    static String scopeColumn(String scope) {
        String printable = scope.indexOf('\0') < 0 ? scope : scope.replace('\0', '?');
        return printable.length() <= KEY_LENGTH ? printable
                : printable.substring(0, KEY_LENGTH);
    }

    static String escape(String scope) {
        if (scope.indexOf(':') < 0 && scope.indexOf('\\') < 0) {
            return scope;
        }
        return scope.replace("\\", "\\\\").replace(":", "\\:");
    }

    private static byte[] sha256(String s) {
        return Sha256.of(s.getBytes(StandardCharsets.UTF_8));
    }
}
