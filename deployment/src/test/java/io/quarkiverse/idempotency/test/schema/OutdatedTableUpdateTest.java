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
 * A table created by an earlier version of the extension is brought up to date at startup: the new columns added,
 * the state constraint dropped, the keys it holds kept.
 */
class OutdatedTableUpdateTest {

    static {
        SchemaSql.beforeStart(OutdatedTableUpdateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS old_keys");
            SchemaSql.firstVersion("old_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "old_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theOldTableIsUpToDateAndItsKeysAreKept() throws SQLException {
        SchemaSql.assertUpToDate(store, new Sql(dataSource), "public", "old_keys");
    }
}
