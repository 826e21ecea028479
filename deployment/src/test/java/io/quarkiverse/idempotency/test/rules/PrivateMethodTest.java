package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

class PrivateMethodTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.INACCESSIBLE,
            "must be neither private nor static [class=io.quarkiverse.idempotency.test.rules.PrivateMethodTest$Consumer, method=handle]",
            Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent
        private void handle(String payload) {
        }
    }
}
