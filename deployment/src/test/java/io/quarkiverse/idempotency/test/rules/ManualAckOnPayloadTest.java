package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Acknowledgment;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

class ManualAckOnPayloadTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.EARLY_ACKNOWLEDGMENT,
            "@Acknowledgment(MANUAL)", Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent
        @Acknowledgment(Acknowledgment.Strategy.MANUAL)
        public void handle(String payload) {
        }
    }
}
