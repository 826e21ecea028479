package io.quarkiverse.idempotency.test.management;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.restassured.specification.RequestSpecification;

/**
 * The dead letters' endpoint on the management interface, with basic authentication: refused without credentials
 * (401) and without the role (403); lists with filters and pages, shows one, releases by key and by reason; bad input
 * answered 400 with what is wrong, and nothing released.
 */
class DeadLetterEndpointTest {

    static final Duration RETENTION = Duration.ofHours(1);

    @RegisterExtension
    static final QuarkusUnitTest APP = ManagementApps.withOperators(
            TestApps.inMemory(new String[0], new String[0], ManagementApps.class));

    @Inject
    IdempotencyStore store;

    @Inject
    DeadLetters deadLetters;

    @BeforeEach
    void deadLetter() {
        deadLetters.releaseAll(DeadLetterFilter.all());
        store.release(new ScopedKey("payments", "order-1"), "replay"); // a test's replay of a released key
        for (int i = 1; i <= 3; i++) {
            dead("payments", "order-" + i, "java.net.SocketTimeoutException: Read timed out");
        }
        dead("refunds", "refund-1", "IllegalStateException: refund too large");
    }

    private void dead(String scope, String key, String failure) {
        ScopedKey scoped = new ScopedKey(scope, key);
        store.claim(scoped, "t-" + key, Duration.ofSeconds(30), RETENTION, new MessageFacts("msg-" + key, null));
        store.recordFailure(scoped, "t-" + key, failure, 1, RETENTION);
    }

    private static RequestSpecification operator() {
        return given().auth().preemptive().basic("operator", "op-secret").contentType("application/json");
    }

    @Test
    void callersWithoutCredentialsOrWithoutTheRoleAreRefused() {
        given().get(ManagementApps.URL).then().statusCode(401);
        given().post(ManagementApps.URL + "/release?all=true").then().statusCode(401);
        given().auth().preemptive().basic("viewer", "view-secret").get(ManagementApps.URL).then().statusCode(403);
        given().auth().preemptive().basic("viewer", "view-secret").post(ManagementApps.URL + "/release?all=true").then()
                .statusCode(403);
        given().auth().preemptive().basic("operator", "wrong").get(ManagementApps.URL).then().statusCode(401);
        assertEquals(4, deadLetters.list(DeadLetterFilter.all()).size(), "nothing released by a refused call");
    }

    @Test
    void anOperatorListsFiltersPagesAndShowsDeadLetters() {
        operator().get(ManagementApps.URL).then().statusCode(200).body("deadLetters", hasSize(4))
                .body("deadLetters[0].scope", equalTo("refunds"));
        operator().get(ManagementApps.URL + "?scope=payments&limit=2").then().statusCode(200).body("deadLetters", hasSize(2))
                .body("more", equalTo(true));
        operator().get(ManagementApps.URL + "?scope=payments&limit=2&offset=2").then().statusCode(200)
                .body("deadLetters", hasSize(1));
        operator().queryParam("reason", "TIMED OUT").get(ManagementApps.URL).then().statusCode(200).body("deadLetters",
                hasSize(3));
        operator().get(ManagementApps.URL + "/key?scope=payments&key=order-2").then().statusCode(200)
                .body("key", equalTo("order-2")).body("attempts", equalTo(1))
                .body("messageId", equalTo("msg-order-2"))
                .body("reason", equalTo("java.net.SocketTimeoutException: Read timed out"));
        operator().get(ManagementApps.URL + "/key?scope=payments&key=order-9").then().statusCode(404)
                .body("error", containsString("not dead-lettered"));
    }

    @Test
    void anOperatorReleasesOneKeyOrAllOfAReason() {
        operator().post(ManagementApps.URL + "/release?scope=payments&key=order-1").then().statusCode(200)
                .body("released", equalTo(1));
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("payments", "order-1"), "replay",
                Duration.ofSeconds(30), RETENTION).result(), "its replay runs");
        operator().queryParam("reason", "refund too large").post(ManagementApps.URL + "/release").then().statusCode(200)
                .body("released", equalTo(1));
        assertEquals(2, deadLetters.list(DeadLetterFilter.all()).size(), "the other keys stay dead-lettered");
        operator().post(ManagementApps.URL + "/release?all=true").then().statusCode(200).body("released", equalTo(2));
    }

    /** A release without a JSON content type: what a cross-site form or a no-cors fetch would send. */
    @Test
    void aReleaseAsACrossSiteFormWouldSendItIsRefused() {
        given().auth().preemptive().basic("operator", "op-secret").post(ManagementApps.URL + "/release?all=true")
                .then().statusCode(415).body("error", containsString("application/json"));
        given().auth().preemptive().basic("operator", "op-secret").contentType("application/x-www-form-urlencoded")
                .post(ManagementApps.URL + "/release?all=true").then().statusCode(415);
        assertEquals(4, deadLetters.list(DeadLetterFilter.all()).size(), "nothing released");
    }

    @Test
    void badInputIsAnsweredWithWhatIsWrongAndReleasesNothing() {
        operator().post(ManagementApps.URL + "/release").then().statusCode(400).body("error", containsString("all=true"));
        operator().post(ManagementApps.URL + "/release?key=order-1").then().statusCode(400).body("error",
                containsString("scope"));
        operator().get(ManagementApps.URL + "?limit=5000").then().statusCode(400).body("error", containsString("limit"));
        operator().get(ManagementApps.URL + "?offset=x").then().statusCode(400).body("error", containsString("whole number"));
        operator().get(ManagementApps.URL + "?since=yesterday").then().statusCode(400).body("error",
                containsString("ISO-8601"));
        operator().get(ManagementApps.URL + "/key?scope=payments").then().statusCode(400).body("error", containsString("key"));
        operator().delete(ManagementApps.URL).then().statusCode(404);
        assertEquals(4, deadLetters.list(DeadLetterFilter.all()).size(), "nothing released");
    }
}
