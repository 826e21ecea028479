package io.quarkiverse.idempotency.test.management;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** The dead letters' endpoint without the management interface (it would be on the application's port): refused. */
class ManagementOnTheApplicationPortTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.MANAGEMENT_WITHOUT_INTERFACE,
            "quarkus.management.enabled=true")
            .overrideConfigKey("quarkus.idempotency.management.enabled", "true");

    @Test
    void theBuildFails() {
        fail("the build must fail");
    }
}
