package io.quarkiverse.idempotency.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.it.Ledger;
import io.quarkiverse.idempotency.it.Services;
import io.quarkiverse.idempotency.testing.AppProcess;

/**
 * The packaged application (the native executable in native mode) against empty schemas: Flyway creates the
 * extension's table from the migrations in the extension's jar; without them, startup fails and names the remedy.
 */
class SchemaIT {

    @Test
    void theMigrationsShippedInTheExtensionCreateItsTable() throws Exception {
        Ledger.execute("DROP SCHEMA IF EXISTS idem_fresh CASCADE");
        Ledger.execute("CREATE SCHEMA idem_fresh");
        try (AppProcess app = AppProcess.start("schema-fresh", Services.with(Map.of("QUARKUS_DATASOURCE_JDBC_URL",
                Ledger.url() + "?currentSchema=idem_fresh")))) {
            // the application's V1 and V2, then the extension's repeatable migrations (keys, outbox), from its jar
            assertEquals("1 payments, 2 receipts, R quarkus idempotency, R quarkus idempotency outbox",
                    Ledger.text("SELECT string_agg(coalesce(version, 'R')"
                            + " || ' ' || description, ', ' ORDER BY installed_rank) FROM idem_fresh.flyway_schema_history"
                            + " WHERE success AND type = 'SQL'"));
            assertEquals(1, Ledger.count("SELECT count(*) FROM information_schema.columns WHERE table_schema ="
                    + " 'idem_fresh' AND table_name = 'idempotency_record' AND column_name = 'lease_until'"));
            assertEquals(1, Ledger.count("SELECT count(*) FROM information_schema.columns WHERE table_schema ="
                    + " 'idem_fresh' AND table_name = 'idempotency_outbox' AND column_name = 'lease_until'"));
        }
    }

    @Test
    void withoutTheTableStartupFailsNamingTheRemedy() throws Exception {
        Ledger.execute("DROP SCHEMA IF EXISTS idem_empty CASCADE");
        Ledger.execute("CREATE SCHEMA idem_empty");
        AppProcess.Exited exited = AppProcess.run("schema-missing", Services.with(Map.of(
                "QUARKUS_DATASOURCE_JDBC_URL", Ledger.url() + "?currentSchema=idem_empty",
                "QUARKUS_FLYWAY_MIGRATE_AT_START", "false")), Duration.ofSeconds(60));
        assertTrue(exited.code() != 0, "startup fails");
        assertTrue(exited.log().contains("The idempotency table 'idempotency_record' does not exist"), exited.log());
        assertTrue(exited.log().contains("classpath:db/idempotency/flyway"), "names the remedy");
    }

    @Test
    void withoutTheOutboxTableStartupFailsNamingTheRemedy() throws Exception {
        Ledger.execute("DROP SCHEMA IF EXISTS idem_no_outbox CASCADE");
        Ledger.execute("CREATE SCHEMA idem_no_outbox");
        String url = Ledger.url() + "?currentSchema=idem_no_outbox";
        // every table, as Flyway creates them; then the outbox's dropped, and Flyway kept from creating it again
        try (AppProcess app = AppProcess.start("schema-outbox-setup", Services.with(Map.of(
                "QUARKUS_DATASOURCE_JDBC_URL", url)))) {
            assertEquals(1, Ledger.count("SELECT count(*) FROM information_schema.tables WHERE table_schema ="
                    + " 'idem_no_outbox' AND table_name = 'idempotency_outbox'"));
        }
        Ledger.execute("DROP TABLE idem_no_outbox.idempotency_outbox");
        AppProcess.Exited exited = AppProcess.run("schema-no-outbox", Services.with(Map.of(
                "QUARKUS_DATASOURCE_JDBC_URL", url, "QUARKUS_FLYWAY_MIGRATE_AT_START", "false")), Duration.ofSeconds(60));
        assertTrue(exited.code() != 0, "startup fails");
        assertTrue(exited.log().contains("The outbox table 'idempotency_outbox' does not exist"), exited.log());
        assertTrue(exited.log().contains("classpath:db/idempotency/outbox/flyway"), "names the remedy");
        assertTrue(exited.log().contains("create it with: CREATE TABLE IF NOT EXISTS idempotency_outbox ("),
                "gives the statements to run by hand");
    }
}
