package io.quarkiverse.idempotency.test.schema;

import java.sql.SQLException;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset (the default: partitioned) and {@code schema-management=update}, an unpartitioned
 * table of an earlier version holding a key is brought up to date and moved to partitions at startup, its key kept.
 */
class DefaultLayoutMovesAnOldTableTest {

    static {
        SchemaSql.beforeStart(DefaultLayoutMovesAnOldTableTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS default_move_keys CASCADE");
            SchemaSql.firstVersion("default_move_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class,
            PartitionMigrationAtStartupTest.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "default_move_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableIsMovedAndItsKeysAreKept() throws SQLException {
        PartitionMigrationAtStartupTest.assertMoved(store, new Sql(dataSource), "default_move_keys");
    }
}
