package io.quarkiverse.idempotency.test.management;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.hasSize;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** Unauthenticated use allowed explicitly, for local use: the endpoint answers without credentials. */
class ManagementAllowedUnauthenticatedTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[0], new String[0], ManagementApps.class)
            .overrideConfigKey("quarkus.idempotency.management.enabled", "true")
            .overrideConfigKey("quarkus.idempotency.management.allow-unauthenticated", "true")
            .overrideConfigKey("quarkus.management.enabled", "true");

    @Test
    void theEndpointAnswersWithoutCredentials() {
        given().get(ManagementApps.URL).then().statusCode(200).body("deadLetters", hasSize(0));
    }
}
