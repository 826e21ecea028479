package io.quarkiverse.idempotency.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.RecordStatements;

/**
 * The statements an idempotent consumer must run under the contract, written by hand with nothing else around them: no
 * interceptor, no lease renewal, no metrics, no cache. A consumer built on these is the floor the extension is measured
 * against: what the contract costs, as opposed to what the extension adds.
 */
@Singleton
public class HandWritten {

    private static final String TABLE = "idempotency_record";
    private static final String CONFIRM = RecordStatements.confirm(TABLE);
    private static final String CLAIM_IN_TRANSACTION = RecordStatements.claimInTransaction(TABLE);
    private static final String TOKEN = "hand-written#1";
    private static final long RETENTION = Duration.ofHours(24).toMillis();
    private static final long LEASE = Duration.ofSeconds(30).toMillis();

    private final AgroalDataSource dataSource;
    private final String claimSql;

    /** @param asynchronousClaimCommit as the extension is configured, so that the floor is the same mode's */
    HandWritten(AgroalDataSource dataSource,
            @ConfigProperty(name = "quarkus.idempotency.database.asynchronous-claim-commit", defaultValue = "false") boolean asynchronousClaimCommit) {
        this.dataSource = dataSource;
        this.claimSql = RecordStatements.claim(TABLE, asynchronousClaimCommit);
    }

    /** The lease-mode claim, committed on its own (auto-commit, outside any transaction). @return whether it is new */
    boolean claim(String id) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(claimSql)) {
            ps.setString(1, id);
            ps.setString(2, id);
            ps.setString(3, "hand");
            ps.setString(4, TOKEN);
            ps.setLong(5, LEASE);
            ps.setLong(6, RETENTION);
            ps.setString(7, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && "NEW".equals(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The lease-mode confirm, in the caller's transaction. */
    void confirm(String id) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(CONFIRM)) {
            ps.setLong(1, RETENTION);
            ps.setString(2, id);
            ps.setString(3, TOKEN);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("claim of " + id + " lost");
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The in-transaction claim: the key inserted as confirmed, in the caller's transaction, guarded by its advisory
     * lock. @return whether it is new
     */
    boolean claimInTransaction(String id) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(CLAIM_IN_TRANSACTION)) {
            ps.setString(1, id);
            ps.setString(2, "hand");
            ps.setString(3, TOKEN);
            ps.setLong(4, RETENTION);
            ps.setString(5, id);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
