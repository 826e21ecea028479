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
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "revoked_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void itIsMoved() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("p", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'revoked_keys'::regclass"));
        assertTrue(store.partitioned());
        assertEquals("revoked_keys", sql.query("SELECT inhparent::regclass::text FROM pg_inherits WHERE inhrelid ="
                + " 'revoked_keys_plegacy'::regclass"));
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result(), "the old table's key is honoured");
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("s", "new"), "t#2", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
    }
}
