package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The shipped repeatable Flyway migration in an application whose own migrations are versioned by timestamps, with
 * the table renamed into a schema of its own: Flyway runs the application's migration and the extension's in one
 * history, without a version clash, the placeholders follow {@code quarkus.idempotency.database.table} with nothing
 * else configured, and the store (validating, as in production) works on the table.
 */
class FlywayRepeatableMigrationTest {

    static final String SCHEMA = "idempotency_flyway_repeatable";

    static {
        SchemaSql.beforeStart(FlywayRepeatableMigrationTest.class,
                () -> SchemaSql.run("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE"));
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(SchemaSql.class, TestApps.class, Sql.class, Delivered.class)
                    .addAsResource("db/timestamped/V20261130120000__orders.sql"))
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", SCHEMA + ".message_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .overrideConfigKey("quarkus.flyway.schemas", SCHEMA)
            .overrideConfigKey("quarkus.flyway.migrate-at-start", "true")
            .overrideConfigKey("quarkus.flyway.locations", "db/timestamped,classpath:db/idempotency/flyway")
            // the migration's placeholder follows it: a partitioned table
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theApplicationsMigrationsAndTheExtensionsShareOneHistory() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("20261130120000 orders, null quarkus idempotency", sql.query("SELECT string_agg(coalesce(version,"
                + " 'null') || ' ' || description, ', ' ORDER BY installed_rank) FROM " + SCHEMA
                + ".flyway_schema_history WHERE success AND type = 'SQL'"));
        // partitioning=time: a new table partitioned by expiry, without the expiry index an unpartitioned one's purge
        // needs; the store (validating) made its functions and partitions at startup
        assertEquals("p", sql.query("SELECT relkind::text FROM pg_class WHERE oid = '" + SCHEMA
                + ".message_keys'::regclass"));
        assertEquals("message_keys_claims,message_keys_pkey", sql.query("SELECT string_agg("
                + "indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = '" + SCHEMA
                + "' AND tablename = 'message_keys'"));
        assertEquals("0", SchemaSql.stateChecks(sql, SCHEMA + ".message_keys"), "no state check constraint");
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("flyway", "k"), "f#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
        assertEquals("1", sql.query("SELECT count(*)::text FROM " + SCHEMA + ".message_keys"));
    }
}
