package io.quarkiverse.idempotency.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;

/**
 * The statements an idempotent consumer must run under the contract, written by hand with nothing else around them: no
 * interceptor, no lease, no metrics, no cache. A consumer built on these is the floor the extension is measured
 * against: what the contract costs, as opposed to what the extension adds.
 */
@Singleton
public class HandWritten {

    private static final String TABLE = "idempotency_record";
    private static final String CONFIRM = DatabaseIdempotencyStore.confirmStatement(TABLE);
    private static final String INSERT_CONFIRMED = "INSERT INTO " + TABLE + " (scoped_key, scope, state, claimed_by,"
            + " recorded_at, expires_at) VALUES (?, ?, 'CONFIRMED', ?, now(), now() + ? * interval '1 millisecond')"
            + " ON CONFLICT (scoped_key) DO NOTHING";
    private static final String WORKER = "hand-written";
    private static final long RETENTION = Duration.ofHours(24).toMillis();
    private static final long TIMEOUT = Duration.ofMinutes(5).toMillis();

    private final AgroalDataSource dataSource;
    private final String claimSql;

    /** @param asynchronousClaimCommit as the extension is configured, so that the floor is the same mode's */
    HandWritten(AgroalDataSource dataSource,
            @ConfigProperty(name = "quarkus.idempotency.database.asynchronous-claim-commit", defaultValue = "false") boolean asynchronousClaimCommit) {
        this.dataSource = dataSource;
        this.claimSql = DatabaseIdempotencyStore.claimStatement(TABLE, asynchronousClaimCommit);
    }

    /** The claim, committed on its own (auto-commit, outside any transaction). @return whether it is new */
    boolean claim(String id) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(claimSql)) {
            ps.setString(1, id);
            ps.setString(2, id);
            ps.setString(3, "hand");
            ps.setString(4, WORKER);
            ps.setLong(5, RETENTION);
            ps.setLong(6, TIMEOUT);
            ps.setLong(7, TIMEOUT);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && "NEW".equals(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The confirm, in the caller's transaction. */
    void confirm(String id) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(CONFIRM)) {
            ps.setLong(1, RETENTION);
            ps.setString(2, id);
            ps.setString(3, WORKER);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("claim of " + id + " lost");
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The key inserted as confirmed, in the caller's transaction. @return whether it is new */
    boolean insertConfirmed(String id) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(INSERT_CONFIRMED)) {
            ps.setString(1, id);
            ps.setString(2, "hand");
            ps.setString(3, WORKER);
            ps.setLong(4, RETENTION);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
