package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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
    static final QuarkusUnitTest APP = SchemaSql.validateFailsNaming("stale_keys", "lease_until, attempts, last_failure",
            "ALTER TABLE stale_keys ADD COLUMN IF NOT EXISTS lease_until");

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
