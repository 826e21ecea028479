package io.quarkiverse.idempotency.runtime.database;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Index;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnDefault;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;
import io.quarkus.panache.common.Sort;

/**
 * One remembered key: the table behind the database store. Rows are written by the store's statements; this entity
 * maps them for schema generation and for reading (operations, Dev UI, tests).
 */
@Entity
@Table(name = IdempotencyRecord.DEFAULT_TABLE, indexes = @Index(name = "idempotency_record_expires_at", columnList = "expires_at"))
public class IdempotencyRecord extends PanacheEntityBase {

    /** The table name unless {@code quarkus.idempotency.database.table} says otherwise. */
    public static final String DEFAULT_TABLE = "idempotency_record";

    /** The longest stored key; longer scoped keys are stored as a SHA-256 digest. */
    public static final int KEY_LENGTH = StorageKeys.KEY_LENGTH;

    /** The state of a key. */
    public enum State {
        /** A handler is running (or died), on a lease: taken over once the lease runs out. */
        CLAIMED,
        /** A handler finished: the message was handled. */
        CONFIRMED,
        /** The last attempt failed ({@link #attempts} counts them): the next delivery tries again. */
        FAILED,
        /** Every attempt of the budget failed and the message was dead-lettered; a replay starts a fresh budget. */
        DEAD_LETTERED
    }

    /** The scoped key (scope, ':' and key), or a SHA-256 digest of it when longer than {@link #KEY_LENGTH}. */
    @Id
    @Column(name = "scoped_key", length = KEY_LENGTH, nullable = false)
    public String scopedKey;

    /** The scope, for operators' queries. */
    @Column(name = "scope", length = KEY_LENGTH, nullable = false)
    public String scope;

    /** CLAIMED or CONFIRMED. */
    @Enumerated(EnumType.STRING)
    @Column(name = "state", length = 16, nullable = false)
    public State state;

    /** The worker holding (or that held) the claim. */
    @Column(name = "claimed_by", length = 128)
    public String claimedBy;

    /** When the key was claimed, last renewed, confirmed, or last failed. */
    @Column(name = "recorded_at", nullable = false)
    public Instant recordedAt;

    /** Until when a {@link State#CLAIMED} key's lease runs, unless renewed. */
    @Column(name = "lease_until")
    public Instant leaseUntil;

    /** How many attempts failed (a key replayed after it was dead-lettered counts from 0 again). */
    // A default, so that versions before attempts existed can still insert during a rolling upgrade.
    @ColumnDefault("0")
    @Column(name = "attempts", nullable = false)
    public int attempts;

    /** The last failed attempt's exception, class and message. */
    @Column(name = "last_failure", length = 1000)
    public String lastFailure;

    /** The id of the message that last wrote the key, when it had one. */
    @Column(name = "message_id", length = 255)
    public String messageId;

    /** A digest of that message's payload, when one was computed. */
    @Column(name = "fingerprint", length = 64)
    public String fingerprint;

    /** When the key may be purged. */
    @Column(name = "expires_at", nullable = false)
    public Instant expiresAt;

    /** @return this key's columns by name, for display */
    public Map<String, Object> describe() {
        Map<String, Object> columns = new LinkedHashMap<>();
        columns.put("key", TableStatements.unscoped(scopedKey, scope));
        columns.put("scope", scope);
        columns.put("state", state.name());
        columns.put("claimedBy", claimedBy);
        columns.put("recordedAt", recordedAt.toString());
        columns.put("leaseUntil", leaseUntil == null ? null : leaseUntil.toString());
        columns.put("attempts", attempts);
        columns.put("lastFailure", lastFailure);
        columns.put("messageId", messageId);
        columns.put("fingerprint", fingerprint);
        columns.put("expiresAt", expiresAt.toString());
        return columns;
    }

    /** @return the number of keys in a state */
    public static long countByState(State state) {
        return count("state", state);
    }

    /** @return the oldest live claims first: handlers that are slow, or that died */
    public static List<IdempotencyRecord> oldestClaims(int limit) {
        return find("state", Sort.ascending("recordedAt"), State.CLAIMED).page(0, limit).list();
    }

    /** @return the most recently recorded keys first */
    public static List<IdempotencyRecord> mostRecent(int limit) {
        return findAll(Sort.descending("recordedAt")).page(0, limit).list();
    }
}
