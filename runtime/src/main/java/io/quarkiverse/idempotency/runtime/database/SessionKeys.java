package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;

import org.hibernate.reactive.mutiny.Mutiny;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.TransactionKeys;
import io.smallrye.mutiny.Uni;

/**
 * Writes keys in a Hibernate Reactive handler's own transaction ({@code @WithTransaction}), through its session, with
 * the protocol the database store runs in a JTA handler's transaction ({@link KeyProtocol}): the same table, the same
 * advisory lock, the same answers, so that blocking and reactive consumers of one key, in one process or two, exclude
 * each other. Nothing here blocks: every statement goes through the session's reactive connection.
 */
public final class SessionKeys {

    private final SqlKeyStore store;
    private final KeyProtocol protocol;

    public SessionKeys(SqlKeyStore store) {
        this.store = store;
        this.protocol = store.protocol();
    }

    /** @return the statements of the transaction of {@code session}, through its reactive connection */
    public static SqlCalls calls(Mutiny.QueryProducer session) {
        return new SessionCalls(session);
    }

    /** @return the writes of a delivery's key in the transaction of {@code session} */
    public TransactionKeys in(Mutiny.QueryProducer session) {
        SqlCalls db = new SessionCalls(session);
        return new TransactionKeys() {
            @Override
            public Uni<Claim> claim(ScopedKey key, String token, Duration retention, boolean asynchronousCommit,
                    MessageFacts facts) {
                // always committed synchronously: the build refuses asynchronous commits for reactive handlers
                return ReactiveLayout.watched(store, store.readyToWrite(retention).chain(partitioned -> protocol
                        .claimInTransaction(db, new KeyProtocol.Write(key, token, retention, facts), false, partitioned)));
            }

            @Override
            public Uni<Boolean> confirm(ScopedKey key, String token, Duration retention) {
                // the confirm moves the key's expiry: a partition must hold it, as for a claim
                return store.readyToWrite(retention)
                        .chain(partitioned -> protocol.confirmInTransaction(db, key, token, retention));
            }
        };
    }
}
