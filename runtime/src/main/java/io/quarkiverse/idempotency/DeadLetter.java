package io.quarkiverse.idempotency;

import java.time.Instant;

/**
 * A dead-lettered key, as the store holds it: the attempt budget of its message was spent, and the message went to the
 * dead-letter queue or topic. It stays so until it is {@linkplain DeadLetters#release released} or expires.
 *
 * @param scope the key's scope (by default the channel's name)
 * @param key the key as stored: as the method's key function made it, its digest under
 *        {@code quarkus.idempotency.key-storage=digest}, or {@code #sha256:} and the digest of a key too long for the
 *        table; give it back as it is to {@link DeadLetters#find} and {@link DeadLetters#releaseAll}
 * @param deadLetteredAt when its last attempt failed
 * @param attempts the attempts that failed
 * @param reason the last attempt's failure, as recorded
 * @param facts the id of the message the key was written with, and its payload's fingerprint, where known
 * @param expiresAt when the store forgets the key (after which a new delivery of it runs again)
 */
public record DeadLetter(String scope, String key, Instant deadLetteredAt, int attempts, String reason,
        MessageFacts facts, Instant expiresAt) {
}
