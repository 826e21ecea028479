package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.SQLException;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset, an empty unpartitioned table that a view reads is not made again partitioned (that
 * would drop the view, or fail): it keeps its layout, the view still reads it, and startup says why, at INFO.
 */
class DefaultLayoutKeepsAViewedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsAViewedTableTest.class, "viewed_keys",
                "CREATE VIEW viewed_keys_report AS SELECT state, count(*) FROM viewed_keys GROUP BY state");
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.keptEmptyTable("viewed_keys", "other objects depend on it");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableAndItsViewStay() throws SQLException {
        Sql sql = new Sql(dataSource);
        LayoutLogs.assertKept(store, sql, "viewed_keys");
        assertEquals("0", sql.query("SELECT count(*)::text FROM viewed_keys_report"));
    }
}
