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
 * An application started with {@code partitioning=time} and {@code schema-management=update} on an unpartitioned
 * table of an earlier version moves it to partitions at startup: the old table becomes the first partition and its key
 * is still a duplicate.
 */
class PartitionMigrationAtStartupTest {

    static {
        SchemaSql.beforeStart(PartitionMigrationAtStartupTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS startup_keys CASCADE");
            SchemaSql.firstVersion("startup_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.movingAtStartup("startup_keys", new String[0]);

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableIsTheFirstPartitionAndItsKeysAreKept() throws SQLException {
        SchemaSql.assertMoved(store, new Sql(dataSource), "startup_keys");
    }
}
