package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.SQLException;
import java.util.List;
import java.util.logging.Level;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.TableStatements;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Schema management set to update on a table that is already up to date, while another instance is in the middle of
 * a transaction on it (here: an uncommitted key): the starting application runs no DDL, so it neither waits for that
 * transaction nor queues the running instances' statements behind a table lock.
 */
class SchemaUpdateOnBusyTableTest {

    /**
     * Another instance's transaction is open on the table while the application starts: a thread of the test holds it
     * until this flag is set (a string in the system properties: this class is loaded twice, by JUnit and by the
     * application, so its statics are not shared), then rolls it back.
     */
    static final String RELEASE = "idempotency.test.busy-table.release";
    /** Set when the thread gave up waiting for the flag (a minute) and rolled back on its own. */
    static final String GAVE_UP = "idempotency.test.busy-table.gave-up";

    static {
        SchemaSql.beforeStart(SchemaUpdateOnBusyTableTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS busy_keys");
            SchemaSql.run(TableStatements.schema("busy_keys").toArray(String[]::new));
            SchemaSql.holdOpenTransaction("INSERT INTO busy_keys (scoped_key, scope, state, recorded_at, expires_at)"
                    + " VALUES ('s:in-flight', 's', 'CONFIRMED', now(), now() + interval '1 day')", RELEASE, GAVE_UP);
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "busy_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            // one table up to date: nothing to do (by default it would be moved to partitions, which waits for
            // running transactions, see PartitionMigration)
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none")
            .setLogRecordPredicate(r -> r.getLevel().intValue() >= Level.WARNING.intValue()
                    && r.getLoggerName().startsWith("io.quarkiverse.idempotency"))
            .assertLogRecords(records -> assertEquals(List.of(), records.stream().map(r -> r.getMessage()).toList(),
                    "no schema change attempted, so nothing waited for the running transaction"));

    @Inject
    AgroalDataSource dataSource;

    @AfterAll
    static void release() {
        System.setProperty(RELEASE, "true");
    }

    @Test
    void startsWithoutTouchingTheTable() throws SQLException {
        assertEquals(null, System.getProperty(GAVE_UP), "startup waited for the other instance's transaction to end");
        assertEquals("0", new Sql(dataSource).query("SELECT count(*) FROM busy_keys"),
                "the other instance's key is still uncommitted: the application started while it was open");
    }
}
