package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.List;

import org.hibernate.reactive.mutiny.Mutiny;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.HandlerTransactionAbortedException;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.TransactionKeys;
import io.smallrye.mutiny.Uni;

/**
 * Writes keys in a Hibernate Reactive handler's own transaction ({@code @WithTransaction}), through its session, with
 * the statements the database store runs in a JTA handler's transaction: the same table, the same advisory lock, the
 * same answers, so that blocking and reactive consumers of one key, in one process or two, exclude each other. Nothing
 * here blocks: every statement goes through the session's reactive connection.
 */
public final class SessionKeys {

    private final SqlKeyStore store;
    private final RecordStatements sql;

    public SessionKeys(SqlKeyStore store) {
        this.store = store;
        this.sql = store.statements();
    }

    /** The answer to an insert that wrote the key: a new key, no attempt failed before. */
    private static final Claim NEW = Claim.claimed(ClaimResult.NEW, 0);

    /** PostgreSQL: the transaction is aborted; commands are ignored until its end. */
    private static final String IN_FAILED_TRANSACTION = "25P02";

    /** @return the writes of a delivery's key in the transaction of {@code session} */
    public TransactionKeys in(Mutiny.QueryProducer session) {
        return new TransactionKeys() {
            @Override
            public Uni<Claim> claim(ScopedKey key, String token, Duration retention, boolean asynchronousCommit,
                    MessageFacts facts) {
                return SessionKeys.this.claim(session, key, token, retention, facts);
            }

            @Override
            public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
                return SessionKeys.this.confirm(session, key, token, retention);
            }
        };
    }

    /**
     * {@link io.quarkiverse.idempotency.IdempotencyStore#claimInTransaction}, in the session's transaction: in the
     * common case one insert of the key, guarded by its advisory lock; when it inserted nothing, the key is looked at
     * again ({@link #look}).
     */
    private Uni<Claim> claim(Mutiny.QueryProducer session, ScopedKey key, String token, Duration retention,
            MessageFacts facts) {
        String refusal = store.sessionRefusal();
        if (refusal != null) {
            return Uni.createFrom().failure(new IllegalStateException("Cannot claim key '" + key + "': " + refusal));
        }
        return claim(session, new Write(key, token, retention, facts), 0);
    }

    /** What one claim writes: the stored key, its scope column, the token, the retention and the message's facts. */
    private record Write(String id, String scope, String token, Duration retention, MessageFacts facts) {
        Write(ScopedKey key, String token, Duration retention, MessageFacts facts) {
            this(StorageKeys.of(key), StorageKeys.scopeColumn(key.scope()), token, retention, facts);
        }
    }

    private Uni<Integer> insert(Mutiny.QueryProducer session, Write write) {
        return session.createNativeQuery(sql.claimInTransaction).setParameter(1, write.id())
                .setParameter(2, write.scope()).setParameter(3, write.token())
                .setParameter(4, write.retention().toMillis()).setParameter(5, write.facts().messageId())
                .setParameter(6, write.facts().fingerprint()).setParameter(7, write.id()).executeUpdate();
    }

    private Uni<Claim> claim(Mutiny.QueryProducer session, Write write, int round) {
        if (round == DatabaseIdempotencyStore.IN_TRANSACTION_ROUNDS) {
            return Uni.createFrom().item(Claim.BUSY);
        }
        return insert(session, write).chain(inserted -> inserted == 1 ? Uni.createFrom().item(NEW)
                : look(session, write, round));
    }

    // The key after an insert that inserted nothing: held by another delivery right now (busy), confirmed (a duplicate),
    // dead-lettered, a lease-mode claim whose lease ran out (expired), or failed (retried here, under the advisory lock
    // this transaction then holds).
    private Uni<Claim> look(Mutiny.QueryProducer session, Write write, int round) {
        return session.<Object[]> createNativeQuery(sql.lookInTransaction).setParameter(1, write.id())
                .setParameter(2, write.id()).getSingleResult().chain(row -> {
                    String state = (String) row[1];
                    if (!Boolean.TRUE.equals(row[0])) {
                        return Uni.createFrom().item(Claim.BUSY);
                    }
                    if (state == null) {
                        return claim(session, write, round + 1); // its holder rolled back since
                    }
                    return switch (state) {
                        case "CONFIRMED" -> Uni.createFrom().item(Claim.done(
                                MessageFacts.of((String) row[5], (String) row[6]),
                                row[7] == null ? null : Duration.ofMillis(((Number) row[7]).longValue())));
                        case "DEAD_LETTERED" ->
                            Uni.createFrom().item(Claim.deadLettered(((Number) row[2]).intValue(), (String) row[4]));
                        // a lease-mode claim: taken over on a lease by the caller once it ran out
                        case "CLAIMED" -> Uni.createFrom().item(Boolean.TRUE.equals(row[3]) ? Claim.EXPIRED : Claim.BUSY);
                        default -> takeOver(session, write, round); // failed: retried here
                    };
                });
    }

    private Uni<Claim> takeOver(Mutiny.QueryProducer session, Write write, int round) {
        return session.<Object> createNativeQuery(sql.takeOverInTransaction).setParameter(1, write.token())
                .setParameter(2, write.retention().toMillis()).setParameter(3, write.facts().messageId())
                .setParameter(4, write.facts().fingerprint()).setParameter(5, write.id()).getResultList()
                .chain((List<Object> attempts) -> attempts.isEmpty()
                        ? claim(session, write, round + 1)
                        : Uni.createFrom().item(Claim.claimed(ClaimResult.NEW, ((Number) attempts.get(0)).intValue())));
    }

    // IdempotencyStore#confirmInTransaction, in the session's transaction: false when the claim is no longer this
    // token's (the caller rolls the transaction back).
    private Uni<Boolean> confirm(Mutiny.QueryProducer session, ScopedKey key, String token, Duration retention) {
        return session.createNativeQuery(sql.confirm).setParameter(1, retention.toMillis())
                .setParameter(2, StorageKeys.of(key)).setParameter(3, token).executeUpdate()
                .map(updated -> updated == 1)
                .onFailure(SessionKeys::aborted).transform(e -> new HandlerTransactionAbortedException("The"
                        + " transaction of the handler of key '" + key + "' was aborted by a statement of its own that"
                        + " failed and was caught: its work and its key cannot commit", e));
    }

    private static boolean aborted(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains(IN_FAILED_TRANSACTION)) {
                return true;
            }
        }
        return false;
    }
}
