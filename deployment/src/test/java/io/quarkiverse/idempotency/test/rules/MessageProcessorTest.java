package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

class MessageProcessorTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.MESSAGE_PROCESSOR,
            "takes a Message and produces one", Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Outgoing("out")
        @Idempotent
        public Message<String> process(Message<String> message) {
            return message.withPayload(message.getPayload() + "!");
        }
    }
}
