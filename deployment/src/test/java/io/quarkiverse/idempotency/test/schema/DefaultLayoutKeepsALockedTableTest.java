package io.quarkiverse.idempotency.test.schema;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset, an empty unpartitioned table that cannot be replaced for a reason no check before it
 * sees (here another session reads it for the whole startup, so its exclusive lock times out after 2 s): the
 * replacement, in a transaction of its own, is rolled back whole, the table keeps its layout, startup says why at INFO,
 * and the rest of the schema update goes on.
 */
class DefaultLayoutKeepsALockedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsALockedTableTest.class, "locked_keys", "SELECT 1");
        SchemaSql.beforeStart(DefaultLayoutKeepsALockedTableTest.class, ".lock",
                DefaultLayoutKeepsALockedTableTest::holdLock);
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.keptEmptyTable("locked_keys", "making it again, partitioned, failed");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableStays() throws SQLException {
        LayoutLogs.assertKept(store, new Sql(dataSource), "locked_keys");
    }

    /** The session that reads the table, its transaction left open until this JVM exits (nothing else uses it). */
    private static Connection reader;

    private static void holdLock() {
        try {
            reader = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
            reader.setAutoCommit(false);
            try (Statement s = reader.createStatement()) {
                s.execute("LOCK TABLE locked_keys IN ACCESS SHARE MODE");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the table could not be locked", e);
        }
    }
}
