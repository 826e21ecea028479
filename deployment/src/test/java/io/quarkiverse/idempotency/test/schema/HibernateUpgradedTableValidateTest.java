package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A table of an earlier version that Hibernate ORM's schema update brought forward has the new columns but still the
 * old state constraint: validating it stops the application at startup, naming the constraint and the statement that
 * widens it, instead of failing the first dead letter with a check violation in production.
 */
class HibernateUpgradedTableValidateTest {

    static {
        SchemaSql.beforeStart(HibernateUpgradedTableValidateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS hibernate_keys");
            SchemaSql.hibernateUpgraded("public", "hibernate_keys");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "hibernate_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    String m = c.getMessage();
                    if (m != null && m.contains("The idempotency table 'hibernate_keys' is from an older version")) {
                        if (!m.contains("DEAD_LETTERED in its state check constraint hibernate_keys_state_check")
                                || !m.contains("DROP CONSTRAINT IF EXISTS hibernate_keys_state_check")) {
                            throw new AssertionError("the message must name the constraint and the remedy: " + m);
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
