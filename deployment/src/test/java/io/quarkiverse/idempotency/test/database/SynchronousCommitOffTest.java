package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A datasource whose connections commit asynchronously by default ({@code synchronous_commit = off} in their options,
 * as a server, database or role setting would make it too) would have messages acked on commits that a crash of
 * PostgreSQL can lose, work and key with them: startup fails, naming where the setting comes from and the remedies.
 */
class SynchronousCommitOffTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.datasource.jdbc.url", TestApps.jdbcUrl()
                    + (TestApps.jdbcUrl().contains("?") ? "&" : "?") + "options=-c%20synchronous_commit%3Doff")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c.getMessage() != null
                            && c.getMessage().contains("connections commit asynchronously by default")
                            && c.getMessage().contains("set by client")
                            && c.getMessage().contains("SET synchronous_commit = on")
                            && c.getMessage().contains("asynchronous-commit=true")) {
                        return;
                    }
                }
                throw new AssertionError("expected the refusal of synchronous_commit = off", t);
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
