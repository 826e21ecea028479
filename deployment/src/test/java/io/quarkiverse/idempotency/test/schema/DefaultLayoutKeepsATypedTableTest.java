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
 * With {@code partitioning} unset, an empty unpartitioned table another table has a column of the row type of (which
 * would keep it from being dropped, or, moved, from being dropped once its keys expire) is not made again partitioned:
 * it keeps its layout, the other table its column, and startup says why, at INFO; the rest of the schema update goes on.
 */
class DefaultLayoutKeepsATypedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsATypedTableTest.class, "typed_keys",
                "DROP TABLE IF EXISTS typed_keys_rows; CREATE TABLE typed_keys_rows (earlier typed_keys)");
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.keptEmptyTable("typed_keys",
            "other objects depend on it");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableAndTheColumnOfItsTypeStay() throws SQLException {
        Sql sql = new Sql(dataSource);
        LayoutLogs.assertKept(store, sql, "typed_keys");
        assertEquals("0", sql.query("SELECT count(*)::text FROM typed_keys_rows"));
        assertEquals("typed_keys_claims", sql.query("SELECT indexname FROM pg_indexes WHERE tablename ="
                + " 'typed_keys' AND indexname LIKE '%claims'"), "the schema update went on");
    }
}
