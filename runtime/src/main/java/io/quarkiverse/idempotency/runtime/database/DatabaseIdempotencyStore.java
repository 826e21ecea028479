package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import org.hibernate.Session;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkus.narayana.jta.QuarkusTransaction;

/**
 * The production store: the {@link IdempotencyRecord} table on PostgreSQL, through Hibernate ORM.
 * <p>
 * The claim is one statement, {@code INSERT ... ON CONFLICT}, committed in its own transaction: the row appearing is
 * the answer to "am I the first?", a stale CLAIMED row is taken over in the same statement, and a duplicate costs no
 * exception and no error log. Confirm and forget are fenced by this worker's id. Timestamps are the database's, so
 * instances with skewed clocks agree.
 */
public class DatabaseIdempotencyStore implements IdempotencyStore {

    private final String worker;
    private final String claimSql;
    private final String confirmSql;
    private final String forgetSql;
    private final String renewSql;
    private final String purgeSql;
    private final String oldestClaimSql;
    private final String checkSql;

    public DatabaseIdempotencyStore(String table, String worker) {
        this.worker = worker;
        // The CTE inserts, or takes over a stale claim; when it did neither, the SELECT reads the state that won. A
        // row inserted concurrently may be invisible to that SELECT's snapshot: no row then, read as BUSY, which is
        // the safe answer (the delivery is retried later).
        this.claimSql = "WITH claimed AS ("
                + " INSERT INTO " + table + " AS r (scoped_key, scope, state, claimed_by, recorded_at, expires_at)"
                + " VALUES (:id, :scope, 'CLAIMED', :worker, now(), now() + :retention * interval '1 millisecond')"
                + " ON CONFLICT (scoped_key) DO UPDATE SET claimed_by = excluded.claimed_by,"
                + " recorded_at = excluded.recorded_at, expires_at = excluded.expires_at"
                + " WHERE r.state = 'CLAIMED' AND r.recorded_at < now() - :timeout * interval '1 millisecond'"
                + " RETURNING CASE WHEN xmax = 0 THEN 'NEW' ELSE 'TAKEN_OVER' END AS outcome)"
                + " SELECT outcome FROM claimed"
                + " UNION ALL SELECT CASE WHEN state = 'CONFIRMED' THEN 'DONE' ELSE 'BUSY' END FROM " + table
                + " WHERE scoped_key = :id AND NOT EXISTS (SELECT 1 FROM claimed)";
        this.confirmSql = "UPDATE " + table + " SET state = 'CONFIRMED', recorded_at = now(),"
                + " expires_at = now() + :retention * interval '1 millisecond'"
                + " WHERE scoped_key = :id AND state = 'CLAIMED' AND claimed_by = :worker";
        this.forgetSql = "DELETE FROM " + table + " WHERE scoped_key = :id AND state = 'CLAIMED' AND claimed_by = :worker";
        this.renewSql = "UPDATE " + table + " SET recorded_at = now()"
                + " WHERE scoped_key IN (:ids) AND state = 'CLAIMED' AND claimed_by = :worker";
        // SKIP LOCKED: instances purging at once take different rows instead of waiting for each other.
        this.purgeSql = "DELETE FROM " + table + " WHERE scoped_key IN (SELECT scoped_key FROM " + table
                + " WHERE expires_at < now() ORDER BY expires_at LIMIT :limit FOR UPDATE SKIP LOCKED)";
        this.oldestClaimSql = "SELECT extract(epoch FROM now() - min(recorded_at))::float8 FROM " + table
                + " WHERE state = 'CLAIMED'";
        this.checkSql = "SELECT 1 FROM " + table + " WHERE 1 = 0";
    }

    @Override
    public Optional<Duration> oldestClaimAge() {
        Number seconds = QuarkusTransaction.requiringNew().call(() -> (Number) session()
                .createNativeQuery(oldestClaimSql, Double.class).getSingleResultOrNull());
        return seconds == null ? Optional.empty() : Optional.of(Duration.ofMillis((long) (seconds.doubleValue() * 1000)));
    }

    @Override
    public void check() {
        QuarkusTransaction.requiringNew().run(() -> session().createNativeQuery(checkSql, Integer.class).getResultList());
    }

    @Override
    public ClaimResult claim(String scope, String key, Duration retention, Duration claimTimeout) {
        String id = StorageKeys.of(scope, key);
        String outcome = QuarkusTransaction.requiringNew().call(() -> session()
                .createNativeQuery(claimSql, String.class)
                .setParameter("id", id)
                .setParameter("scope", StorageKeys.scopeColumn(scope))
                .setParameter("worker", worker)
                .setParameter("retention", retention.toMillis())
                .setParameter("timeout", claimTimeout.toMillis())
                .getSingleResultOrNull());
        return outcome == null ? ClaimResult.BUSY : ClaimResult.valueOf(outcome);
    }

    @Override
    public boolean confirm(String scope, String key, Duration retention) {
        String id = StorageKeys.of(scope, key);
        // Inside the handler's transaction when there is one: "the work committed" and "the key is a fact" are one event.
        return QuarkusTransaction.joiningExisting().call(() -> session().createNativeMutationQuery(confirmSql)
                .setParameter("id", id)
                .setParameter("worker", worker)
                .setParameter("retention", retention.toMillis())
                .executeUpdate()) == 1;
    }

    @Override
    public boolean forget(String scope, String key) {
        String id = StorageKeys.of(scope, key);
        return QuarkusTransaction.requiringNew().call(() -> session().createNativeMutationQuery(forgetSql)
                .setParameter("id", id)
                .setParameter("worker", worker)
                .executeUpdate()) == 1;
    }

    @Override
    public void renew(Collection<ScopedKey> keys) {
        if (keys.isEmpty()) {
            return;
        }
        List<String> ids = new ArrayList<>(keys.size());
        for (ScopedKey k : keys) {
            ids.add(StorageKeys.of(k.scope(), k.key()));
        }
        QuarkusTransaction.requiringNew().run(() -> session().createNativeMutationQuery(renewSql)
                .setParameterList("ids", ids)
                .setParameter("worker", worker)
                .executeUpdate());
    }

    @Override
    public int purgeExpired(int limit) {
        return QuarkusTransaction.requiringNew().call(() -> session().createNativeMutationQuery(purgeSql)
                .setParameter("limit", limit)
                .executeUpdate());
    }

    @Override
    public boolean joinsTransactions() {
        return true;
    }

    /** @return the id this store fences claims with */
    public String worker() {
        return worker;
    }

    private static Session session() {
        return IdempotencyRecord.getSession();
    }
}
