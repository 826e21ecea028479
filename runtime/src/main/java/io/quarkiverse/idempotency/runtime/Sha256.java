package io.quarkiverse.idempotency.runtime;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SHA-256 with a digest per thread, made on the thread's first use: a digest looked up per message goes through the
 * security providers each time (1% of a consumer's time in a profile, for the payload fingerprint). The digests are
 * made at run time, on the threads that use them: a native image initializing this class at build time holds only the
 * empty thread-local.
 */
public final class Sha256 {

    private static final ThreadLocal<MessageDigest> DIGESTS = ThreadLocal.withInitial(Sha256::newDigest);

    private Sha256() {
    }

    /** @return the SHA-256 of those bytes (the thread's digest is reset by it, ready for the next use) */
    public static byte[] of(byte[] bytes) {
        return DIGESTS.get().digest(bytes);
    }

    private static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
