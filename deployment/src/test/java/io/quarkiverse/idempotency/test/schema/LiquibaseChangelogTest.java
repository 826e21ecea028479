package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * The Liquibase changelog shipped in the extension's jar creates the table, under the name the application gives it,
 * and the store (validating, as in production) uses it.
 */
class LiquibaseChangelogTest {

    static {
        SchemaSql.beforeStart(LiquibaseChangelogTest.class, () -> SchemaSql.run("DROP TABLE IF EXISTS liquibase_keys",
                "DROP TABLE IF EXISTS databasechangelog", "DROP TABLE IF EXISTS databasechangeloglock"));
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "liquibase_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .overrideConfigKey("quarkus.liquibase.migrate-at-start", "true")
            .overrideConfigKey("quarkus.liquibase.change-log", "db/idempotency/liquibase/idempotency-changelog.xml")
            .overrideConfigKey("quarkus.liquibase.change-log-parameters.\"idempotency.table\"", "liquibase_keys")
            .overrideConfigKey("quarkus.liquibase.change-log-parameters.\"idempotency.partitioning\"", "time");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theChangelogCreatesTheTableTheStoreUses() throws SQLException {
        assertEquals("5", new Sql(dataSource).query("SELECT count(*)::text FROM databasechangelog"
                + " WHERE author = 'quarkus-idempotency'"));
        // idempotency.partitioning=time: a new table partitioned by expiry; the store (validating) made its functions
        // and partitions at startup
        assertEquals("p", new Sql(dataSource).query("SELECT relkind::text FROM pg_class WHERE oid ="
                + " 'liquibase_keys'::regclass"));
        assertEquals("liquibase_keys_claims,liquibase_keys_pkey", new Sql(dataSource).query("SELECT string_agg("
                + "indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'liquibase_keys'"));
        // the first changeset's state check constraint, dropped by the fifth
        assertEquals("0", SchemaSql.stateChecks(new Sql(dataSource), "liquibase_keys"));
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("s", "k"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
        assertEquals("1", new Sql(dataSource).query("SELECT count(*)::text FROM liquibase_keys"));
    }
}
