package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With a custom table name, the missing-table remedy does not send the user to a migration that creates another
 * table.
 */
class MissingCustomTableTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.idempotency.database.table", "never_created_keys")
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    String m = c.getMessage();
                    if (m != null && m.contains("The idempotency table 'never_created_keys' does not exist")) {
                        if (!m.contains("idempotency.table=never_created_keys")
                                || !m.contains("CREATE TABLE IF NOT EXISTS never_created_keys")) {
                            throw new AssertionError("the remedy must say how to get this table: " + m, t);
                        }
                        return;
                    }
                }
                throw new AssertionError("expected the missing-table remedy", t);
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
