package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

class NotOnIncomingTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.NOT_INCOMING,
            "@Idempotent is only allowed on @Incoming methods [class=io.quarkiverse.idempotency.test.rules.NotOnIncomingTest$Consumer, method=handle]; add @Incoming or remove @Idempotent",
            Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Idempotent
        public void handle(String payload) {
        }
    }
}
