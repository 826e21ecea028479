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
 * With {@code partitioning} unset, an empty unpartitioned table on which privileges were granted is not made again
 * partitioned (a new table would not have them): it keeps its layout and its grant, and startup says why, at INFO.
 */
class DefaultLayoutKeepsAGrantedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsAGrantedTableTest.class, "granted_keys",
                "GRANT SELECT ON granted_keys TO PUBLIC");
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.keptEmptyTable("granted_keys", "privileges granted");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableAndItsGrantStay() throws SQLException {
        Sql sql = new Sql(dataSource);
        LayoutLogs.assertKept(store, sql, "granted_keys");
        assertEquals("true", sql.query("SELECT has_table_privilege('public', 'granted_keys', 'SELECT')::text"));
    }
}
