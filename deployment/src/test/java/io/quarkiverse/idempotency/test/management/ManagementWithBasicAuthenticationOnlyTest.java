package io.quarkiverse.idempotency.test.management;

import static io.restassured.RestAssured.given;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The endpoint on a management interface that sets only {@code quarkus.management.auth.basic=true}, which enables its
 * authentication in Quarkus: accepted, and protected by the role.
 */
class ManagementWithBasicAuthenticationOnlyTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[0], new String[0])
            .overrideConfigKey("quarkus.idempotency.management.enabled", "true")
            .overrideConfigKey("quarkus.management.enabled", "true")
            .overrideConfigKey("quarkus.management.auth.basic", "true")
            .overrideConfigKey("quarkus.security.users.embedded.enabled", "true")
            .overrideConfigKey("quarkus.security.users.embedded.plain-text", "true")
            .overrideConfigKey("quarkus.security.users.embedded.users.operator", "op-secret")
            .overrideConfigKey("quarkus.security.users.embedded.roles.operator", "idempotency-admin")
            .overrideConfigKey("quarkus.security.users.embedded.users.viewer", "view-secret");

    @Test
    void theEndpointAnswersTheRoleOnly() {
        given().get(ManagementApps.URL).then().statusCode(401);
        given().auth().preemptive().basic("viewer", "view-secret").get(ManagementApps.URL).then().statusCode(403);
        given().auth().preemptive().basic("operator", "op-secret").get(ManagementApps.URL).then().statusCode(200);
    }
}
