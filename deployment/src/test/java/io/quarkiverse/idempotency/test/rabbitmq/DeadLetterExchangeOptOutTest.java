package io.quarkiverse.idempotency.test.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A channel whose queue is dead-lettered by the broker (a policy) opts out of the dead-letter exchange check, and
 * starts.
 */
class DeadLetterExchangeOptOutTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.queue(RabbitApps.bare(Consumer.class), "idempotency-test-policy")
            .overrideConfigKey("quarkus.idempotency.channels.\"idempotency-test-policy\".require-dead-letter-exchange",
                    "false");

    @Inject
    IdempotentMethods methods;

    @Test
    void startsWithTheOptOut() {
        assertTrue(methods.channels().contains("idempotency-test-policy"));
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("idempotency-test-policy")
        @Idempotent
        void handle(String payload) {
        }
    }
}
