package io.quarkiverse.idempotency;

/**
 * A duplicate whose payload differs from the payload its key was written with (their fingerprints differ), on a channel
 * that dead-letters such messages ({@code quarkus.idempotency.payload-mismatch=dead-letter}): two different messages
 * share the key, so the key function is probably wrong, or the producer reused an id. The message is dead-lettered
 * without running; the key's record is left as it is.
 */
public final class PayloadMismatchException extends IdempotencyException {

    private final String firstMessageId;
    private final String messageId;

    public PayloadMismatchException(ScopedKey key, String firstMessageId, String messageId) {
        super("Key '" + key + "' was handled for message " + describe(firstMessageId) + " with a different payload than"
                + " message " + describe(messageId) + "'s; dead-lettered without running (payload-mismatch)", key, null, false);
        this.firstMessageId = firstMessageId;
        this.messageId = messageId;
    }

    private static String describe(String id) {
        return id == null ? "(no id)" : "'" + id + "'";
    }

    /** @return the id of the message the key was written with, or {@code null} when it is not known */
    public String firstMessageId() {
        return firstMessageId;
    }

    /** @return the id of the message dead-lettered, or {@code null} when it has none */
    public String messageId() {
        return messageId;
    }
}
