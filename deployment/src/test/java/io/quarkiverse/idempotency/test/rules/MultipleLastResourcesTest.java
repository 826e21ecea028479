package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A transaction allowed to commit two non-XA datasources one after the other could commit a key without the work on
 * the other datasource: with a {@code @Transactional @Idempotent} method, that setting fails the build, naming it.
 */
class MultipleLastResourcesTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "orders" }, Handler.class)
            .overrideConfigKey("quarkus.transaction-manager.unsafe-multiple-last-resources", "allow")
            .assertException(t -> TestApps.assertBroken(t, Rule.MULTIPLE_LAST_RESOURCES,
                    "quarkus.transaction-manager.unsafe-multiple-last-resources=allow"));

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Handler {
        @Incoming("orders")
        @Idempotent
        @Transactional
        void handle(String order) {
        }
    }
}
