package io.quarkiverse.idempotency.test.validation;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.InvalidDurationException;
import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.test.QuarkusUnitTest;

class InvalidDurationTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(InvalidDurationException.class,
            "@Idempotent(lease = \"soon\") is not a positive duration", Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent(lease = "soon")
        public void handle(String payload) {
        }
    }
}
