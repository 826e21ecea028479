package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * A method on the event loop that takes the Message: it acks it itself, which only a blocking method's delivery
 * follows (a payload method there is supported: EventLoopConsumersTest).
 */
class EventLoopTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.EVENT_LOOP, "takes the Message", Consumer.class);

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent
        public Uni<Void> handle(Message<String> message) {
            return Uni.createFrom().completionStage(message::ack);
        }
    }
}
