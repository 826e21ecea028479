package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Multi;

class StreamSignatureTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.STREAM, "consumes or produces a stream",
            Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Outgoing("out")
        @Idempotent
        public Multi<String> split(String payload) {
            return Multi.createFrom().items(payload.split(","));
        }
    }
}
