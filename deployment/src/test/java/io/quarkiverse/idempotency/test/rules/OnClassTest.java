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

class OnClassTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.ON_CLASS,
            "@Idempotent is not allowed on a class", Consumer.class, Annotated.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        void handle(String payload) {
        }
    }

    @Idempotent
    @ApplicationScoped
    public static class Annotated {
        public void any() {
        }
    }
}
