package io.quarkiverse.idempotency.test.management;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** The dead letters' endpoint on a management interface that authenticates nobody: the build refuses it. */
class ManagementWithoutAuthenticationTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.MANAGEMENT_WITHOUT_AUTHENTICATION,
            "allow-unauthenticated")
            .overrideConfigKey("quarkus.idempotency.management.enabled", "true")
            .overrideConfigKey("quarkus.management.enabled", "true");

    @Test
    void theBuildFails() {
        fail("the build must fail");
    }
}
