package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

class KeyFunctionTypeTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.KEY_FUNCTION_PAYLOAD,
            "accepts java.lang.Integer but the method's payload is java.lang.String", Consumer.class,
            IntegerKey.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent(key = IntegerKey.class)
        public void handle(String payload) {
        }
    }

    public static class IntegerKey implements KeyFunction<Integer> {
        @Override
        public String key(Integer payload, Metadata metadata) {
            return String.valueOf(payload);
        }
    }
}
