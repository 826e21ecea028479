package io.quarkiverse.idempotency.test.kafka;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * A method on the event loop (returning Uni, without @Blocking) on a Kafka channel: Kafka retries a record in place,
 * waiting on the handler's thread, which an event loop must not do. Startup fails and says so, even with a store whose
 * calls never block.
 */
class KafkaEventLoopRefusedTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(t -> {
        String message = TestApps.messages(t);
        if (!message.contains("returns Uni without @Blocking, so it runs on the event loop")
                || !message.contains("its channel records retries failed deliveries in place (Kafka)")
                || !message.contains("annotate the method with @Blocking")) {
            throw new AssertionError("expected the event loop refusal, found: " + message, t);
        }
    }, Consumer.class)
            .overrideConfigKey("kafka.bootstrap.servers", "127.0.0.1:1")
            .overrideConfigKey("mp.messaging.incoming.records.connector", "smallrye-kafka");

    @Test
    void startupFails() {
        fail("startup must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("records")
        @Idempotent
        public Uni<Void> handle(String payload) {
            return Uni.createFrom().voidItem();
        }
    }
}
