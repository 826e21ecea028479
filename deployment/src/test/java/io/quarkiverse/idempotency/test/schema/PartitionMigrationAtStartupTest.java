package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
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
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "startup_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableIsTheFirstPartitionAndItsKeysAreKept() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("p", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'startup_keys'::regclass"));
        assertTrue(store.partitioned());
        assertEquals("startup_keys", sql.query("SELECT inhparent::regclass::text FROM pg_inherits WHERE inhrelid ="
                + " 'startup_keys_plegacy'::regclass"));
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result(), "the old table's key is honoured");
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("s", "new"), "t#2", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
    }
}
