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

/**
 * A channel fed by the application itself has no broker to retry through: its outcomes would go back to the emitter.
 */
class InternalChannelTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.INTERNAL_CHANNEL,
            "consumes channel 'internal', which no connector feeds", Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Outgoing("internal")
        Multi<String> produce() {
            return Multi.createFrom().items("a", "b");
        }

        @Incoming("internal")
        @Idempotent
        void handle(String payload) {
        }
    }
}
