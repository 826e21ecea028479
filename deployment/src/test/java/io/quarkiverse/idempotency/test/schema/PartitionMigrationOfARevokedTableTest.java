package io.quarkiverse.idempotency.test.schema;

import java.sql.SQLException;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A table whose privileges were revoked from PUBLIC (and granted to its owner, who has them): its catalog entry now
 * holds privileges, but none a new table would lack, so the move to partitions at startup goes ahead.
 */
class PartitionMigrationOfARevokedTableTest {

    static {
        SchemaSql.beforeStart(PartitionMigrationOfARevokedTableTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS revoked_keys CASCADE");
            SchemaSql.firstVersion("revoked_keys");
            // an ACL that grants no one anything a new table's owner would not have
            SchemaSql.run("REVOKE ALL ON revoked_keys FROM PUBLIC", "GRANT SELECT ON revoked_keys TO CURRENT_USER");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.movingAtStartup("revoked_keys", new String[0],
            PartitionMigrationAtStartupTest.class);

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void itIsMoved() throws SQLException {
        SchemaSql.assertMoved(store, new Sql(dataSource), "revoked_keys");
    }
}
