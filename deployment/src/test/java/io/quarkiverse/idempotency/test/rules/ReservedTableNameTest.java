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

class ReservedTableNameTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.INVALID_TABLE_NAME,
            "quarkus.idempotency.database.table='order' is not a valid table name", Consumer.class)
            .overrideConfigKey("quarkus.idempotency.database.table", "order");

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent
        public void handle(String payload) {
        }
    }
}
