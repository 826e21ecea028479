package io.quarkiverse.idempotency.test.management;

import static io.restassured.RestAssured.given;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application that overrides the management interface's permission for the endpoint's paths (here: permit all):
 * the endpoint still checks the caller's role itself.
 */
class ManagementPermissionOverriddenTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ManagementApps.withOperators(
            TestApps.inMemory(new String[0], new String[0], ManagementApps.class))
            .overrideConfigKey("quarkus.management.auth.permission.idempotency-management.policy", "permit");

    @Test
    void theEndpointStillRequiresTheRole() {
        given().contentType("application/json").post(ManagementApps.URL + "/release?all=true").then().statusCode(401);
        given().auth().preemptive().basic("viewer", "view-secret").contentType("application/json")
                .post(ManagementApps.URL + "/release?all=true")
                .then().statusCode(403);
        given().auth().preemptive().basic("operator", "op-secret").get(ManagementApps.URL).then()
                .statusCode(200);
    }
}
