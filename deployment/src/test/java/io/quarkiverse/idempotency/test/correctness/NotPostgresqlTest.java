package io.quarkiverse.idempotency.test.correctness;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.deployment.exception.StoreConfigurationException;
import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The database store's SQL is PostgreSQL's: a datasource of another kind fails the build.
 */
class NotPostgresqlTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.datasource.db-kind", "other")
            .overrideConfigKey("quarkus.datasource.jdbc.driver", "org.postgresql.Driver")
            .overrideConfigKey("quarkus.hibernate-orm.dialect", "org.hibernate.dialect.PostgreSQLDialect")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c instanceof StoreConfigurationException e
                            && e.getMessage().contains("quarkus.datasource.db-kind=other")) {
                        return;
                    }
                    for (Throwable s : c.getSuppressed()) {
                        if (s instanceof StoreConfigurationException e
                                && e.getMessage().contains("quarkus.datasource.db-kind=other")) {
                            return;
                        }
                    }
                }
                throw new AssertionError("expected the PostgreSQL-only error", t);
            });

    @Test
    void buildFails() {
        fail("the build must fail");
    }
}
