package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
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
            .assertException(t -> TestApps.assertBroken(t, Rule.NOT_POSTGRESQL, "quarkus.datasource.db-kind=other"));

    @Test
    void buildFails() {
        fail("the build must fail");
    }
}
