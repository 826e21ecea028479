package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Validating a table of an earlier version (the extension upgraded, its new migration not run) stops the application
 * at startup, naming what is missing and the statements that add it, instead of failing every message later.
 */
class OutdatedTableValidateTest {

    static {
        SchemaSql.beforeStart(OutdatedTableValidateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS stale_keys");
            SchemaSql.firstVersion("stale_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "stale_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    String m = c.getMessage();
                    if (m != null && m.contains("The idempotency table 'stale_keys' is from an older version")) {
                        if (!m.contains("lease_until, attempts, last_failure")
                                || !m.contains("ALTER TABLE stale_keys ADD COLUMN IF NOT EXISTS lease_until")) {
                            throw new AssertionError("the message must name the missing columns and the remedy: " + m);
                        }
                        return;
                    }
                }
                throw new AssertionError("expected the outdated-table error", t);
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
