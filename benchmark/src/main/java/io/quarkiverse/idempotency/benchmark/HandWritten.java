package io.quarkiverse.idempotency.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import jakarta.annotation.PostConstruct;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.GroupCommit;
import io.quarkiverse.idempotency.runtime.database.RecordStatements;
import io.quarkiverse.idempotency.runtime.database.TableStatements;

/**
 * The statements an idempotent consumer must run under the contract, written by hand with nothing else around them: no
 * interceptor, no lease renewal, no metrics, no cache. A consumer built on these is the floor the extension is measured
 * against: what the contract costs, as opposed to what the extension adds.
 */
@Singleton
public class HandWritten {

    /**
     * The floors' own table, of the extension's schema: their keys do not grow the extension's table (nor its keys
     * theirs), so that the extension's consumer, its floor and Spring's receiver, whose store holds only its own keys,
     * each insert into a table of their own keys (with the floors' keys in it, the extension's table held twice
     * Spring's rows, and four times its size, in a server whose shared buffers no longer held every table).
     */
    static final String TABLE = "idempotency_floor";
    private static final String CONFIRM = RecordStatements.confirm(TABLE);
    private static final String CLAIM_IN_TRANSACTION = RecordStatements.claimInTransaction(TABLE);
    private static final String CLAIM_IN_TRANSACTION_ASYNCHRONOUSLY = RecordStatements.claimInTransaction(TABLE, true);
    private static final String FLUSH_CONFIRMING = RecordStatements.flushConfirming(TABLE);
    private static final String TOKEN = "hand-written#1";
    private static final long RETENTION = Duration.ofHours(24).toMillis();
    private static final long LEASE = Duration.ofSeconds(30).toMillis();

    private final AgroalDataSource dataSource;
    private final String claimSql;
    /** The WAL flushes of the deliveries waiting at once, shared: one transaction for all of them. */
    private final GroupCommit<String, Boolean> flushes = new GroupCommit<>(this::flush, 4096);

    /** @param asynchronousClaimCommit as the extension is configured, so that the floor is the same mode's */
    HandWritten(AgroalDataSource dataSource,
            @ConfigProperty(name = "quarkus.idempotency.database.asynchronous-claim-commit", defaultValue = "false") boolean asynchronousClaimCommit) {
        this.dataSource = dataSource;
        this.claimSql = RecordStatements.claim(TABLE, asynchronousClaimCommit);
    }

    /**
     * Creates the floors' table afresh, as Hibernate ORM does the extension's and the peers do theirs; not in a
     * consumer process of the benchmark's own ({@link ConsumerProcess}: the parent's tables are not its to reset).
     */
    @PostConstruct
    void createTable() {
        if (System.getProperty(RecoveryRun.ROLE) != null) {
            return;
        }
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            for (String statement : TableStatements.schema(TABLE)) {
                s.execute(statement);
            }
            s.execute("TRUNCATE " + TABLE);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
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
            ps.setString(7, id); // the message id, kept with the key as the extension keeps it
            ps.setString(8, null); // no payload fingerprint: the floor computes none
            ps.setString(9, id);
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
        return claimInTransaction(id, false);
    }

    /**
     * The same; with {@code asynchronousCommit}, a new key also sets the transaction to commit without waiting for its
     * WAL flush, in the same statement. @return whether it is new
     */
    boolean claimInTransaction(String id, boolean asynchronousCommit) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(asynchronousCommit
                        ? CLAIM_IN_TRANSACTION_ASYNCHRONOUSLY
                        : CLAIM_IN_TRANSACTION)) {
            ps.setString(1, id);
            ps.setString(2, "hand");
            ps.setString(3, TOKEN);
            ps.setLong(4, RETENTION);
            ps.setString(5, id); // the message id, kept with the key as the extension keeps it
            ps.setString(6, null); // no payload fingerprint: the floor computes none
            ps.setString(7, id);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Returns once the WAL is flushed past every commit that returned before this call (one synchronous commit for the
     * callers waiting at once, and for those arriving while it runs, the next one), with whether the key is confirmed
     * as the flush saw it. Under the contract a consumer that commits asynchronously must ask both: after a database
     * crash and restart, a flush succeeds on the new server while the commit it waited for may be lost, and only the
     * key's row tells (an ack never before the outcome that justifies it is durable).
     *
     * @param id the key, as {@link #claimInTransaction} wrote it
     * @return whether the key is confirmed and durable
     */
    boolean awaitConfirmedDurably(String id) {
        return flushes.submit(id);
    }

    /** @return how many flushes ran, and how many deliveries they served */
    long[] flushStatistics() {
        return flushes.statistics();
    }

    private List<Boolean> flush(List<String> batch) {
        Set<String> confirmed = new HashSet<>();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(FLUSH_CONFIRMING)) {
                ps.setArray(1, c.createArrayOf("text", batch.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    Collections.addAll(confirmed, (String[]) rs.getArray(3).getArray());
                }
                c.commit();
            } finally {
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        List<Boolean> answers = new ArrayList<>(batch.size());
        for (String id : batch) {
            answers.add(confirmed.contains(id));
        }
        return answers;
    }
}
