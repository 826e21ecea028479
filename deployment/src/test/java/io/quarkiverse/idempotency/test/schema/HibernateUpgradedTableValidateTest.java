package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.test.QuarkusUnitTest;

/**
 * A table of an earlier version that Hibernate ORM's schema update brought forward has the new columns but still the
 * old state constraint: validating it stops the application at startup, naming the constraint and the statement that
 * drops it, instead of failing the first dead letter with a check violation in production.
 */
class HibernateUpgradedTableValidateTest {

    static {
        SchemaSql.beforeStart(HibernateUpgradedTableValidateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS hibernate_keys");
            SchemaSql.hibernateUpgraded("public", "hibernate_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.validateFailsNaming("hibernate_keys",
            "DEAD_LETTERED in its state check constraint hibernate_keys_state_check",
            "DROP CONSTRAINT IF EXISTS hibernate_keys_state_check");

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
