package io.quarkiverse.idempotency;

import java.time.Instant;
import java.util.Locale;

/**
 * Which dead-lettered keys to list or release, newest first, a page at a time. Every criterion left {@code null}
 * matches all.
 *
 * @param scope only keys of this scope (by default a channel's name)
 * @param key only this key, as {@link DeadLetter#key} shows it (needs {@code scope})
 * @param reason only keys whose recorded failure contains this text, ignoring case
 * @param since only keys dead-lettered at or after this instant
 * @param offset how many matching keys to skip (paging; listing only)
 * @param limit how many keys at the most, 1 to {@value #MAX_LIMIT} (listing only)
 */
public record DeadLetterFilter(String scope, String key, String reason, Instant since, int offset, int limit) {

    /** The largest page. */
    public static final int MAX_LIMIT = 1000;
    /** The page size of {@link #all()}. */
    public static final int DEFAULT_LIMIT = 100;

    public DeadLetterFilter {
        scope = blankToNull(scope);
        reason = blankToNull(reason);
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be 0 or more, not " + offset);
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be from 1 to " + MAX_LIMIT + ", not " + limit);
        }
        if (key != null && scope == null) {
            throw new IllegalArgumentException("a key is looked up within its scope: give the scope too");
        }
    }

    /** @return every dead-lettered key, the first {@value #DEFAULT_LIMIT} */
    public static DeadLetterFilter all() {
        return new DeadLetterFilter(null, null, null, null, 0, DEFAULT_LIMIT);
    }

    /** @return this filter, for keys of one scope only */
    public DeadLetterFilter inScope(String scope) {
        return new DeadLetterFilter(scope, key, reason, since, offset, limit);
    }

    /** @return this filter, for one key of a scope */
    public DeadLetterFilter forKey(String scope, String key) {
        return new DeadLetterFilter(scope, key, reason, since, offset, limit);
    }

    /** @return this filter, for keys whose recorded failure contains the text, ignoring case */
    public DeadLetterFilter withReasonContaining(String reason) {
        return new DeadLetterFilter(scope, key, reason, since, offset, limit);
    }

    /** @return this filter, for keys dead-lettered at or after the instant */
    public DeadLetterFilter deadLetteredSince(Instant since) {
        return new DeadLetterFilter(scope, key, reason, since, offset, limit);
    }

    /** @return this filter, for another page */
    public DeadLetterFilter page(int offset, int limit) {
        return new DeadLetterFilter(scope, key, reason, since, offset, limit);
    }

    /**
     * @return whether a dead-lettered key matches (for stores that filter in memory); paging is the caller's
     */
    public boolean matches(String scope, String key, String reason, Instant deadLetteredAt) {
        return (this.scope == null || this.scope.equals(scope))
                && (this.key == null || this.key.equals(key))
                && (this.reason == null
                        || reason != null && reason.toLowerCase(Locale.ROOT).contains(this.reason.toLowerCase(Locale.ROOT)))
                && (since == null || deadLetteredAt != null && !deadLetteredAt.isBefore(since));
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
