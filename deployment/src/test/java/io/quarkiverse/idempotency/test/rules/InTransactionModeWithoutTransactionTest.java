package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

class InTransactionModeWithoutTransactionTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.IN_TRANSACTION_INELIGIBLE,
            "@Idempotent(mode = IN_TRANSACTION) needs a @Transactional method", Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent(mode = IdempotencyMode.IN_TRANSACTION)
        public void handle(String payload) {
        }
    }
}
