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
 * With {@code partitioning} unset, an empty unpartitioned table another table inherits from is not made again
 * partitioned (it could be neither dropped nor attached as a partition): the table keeps its layout and its child, and
 * startup says why, at INFO; the rest of the schema update goes on. (What the checks do not look for fails the
 * replacement's own transaction instead: {@code DefaultLayoutKeepsALockedTableTest}.)
 */
class DefaultLayoutKeepsAnInheritedTableTest {

    static {
        LayoutLogs.emptyTableWith(DefaultLayoutKeepsAnInheritedTableTest.class, "inherited_keys",
                "CREATE TABLE inherited_keys_child () INHERITS (inherited_keys)");
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = LayoutLogs.keptEmptyTable("inherited_keys",
            "another table inherits from it");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableAndItsChildStay() throws SQLException {
        Sql sql = new Sql(dataSource);
        LayoutLogs.assertKept(store, sql, "inherited_keys");
        assertEquals("0", sql.query("SELECT count(*)::text FROM inherited_keys_child"));
        assertEquals("inherited_keys_claims", sql.query("SELECT indexname FROM pg_indexes WHERE tablename ="
                + " 'inherited_keys' AND indexname LIKE '%claims'"), "the schema update went on");
    }
}
