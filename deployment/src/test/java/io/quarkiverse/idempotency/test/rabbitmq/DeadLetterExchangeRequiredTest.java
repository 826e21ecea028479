package io.quarkiverse.idempotency.test.rabbitmq;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An {@code @Idempotent} RabbitMQ channel whose queue has no dead-letter exchange would drop what it dead-letters:
 * startup fails, naming the two properties to set and the opt-out; a channel whose failure strategy is not the
 * idempotency strategy fails too, in the same report, and so does one with a fixed consumer tag.
 */
class DeadLetterExchangeRequiredTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.queue(RabbitApps.queue(RabbitApps.queue(
            RabbitApps.bare(Consumer.class), "idempotency-test-no-dlx"), "idempotency-test-requeue"),
            "idempotency-test-tagged")
            .overrideConfigKey("mp.messaging.incoming.idempotency-test-requeue.auto-bind-dlq", "true")
            .overrideConfigKey("mp.messaging.incoming.idempotency-test-requeue.failure-strategy", "requeue")
            .overrideConfigKey("mp.messaging.incoming.idempotency-test-tagged.auto-bind-dlq", "true")
            .overrideConfigKey("mp.messaging.incoming.idempotency-test-tagged.consumer-tag", "payments-consumer")
            .assertException(t -> {
                String message = null;
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c.getMessage() != null && c.getMessage().contains("idempotency-test-no-dlx")) {
                        message = c.getMessage();
                    }
                }
                if (message == null
                        || !message.contains("mp.messaging.incoming.idempotency-test-no-dlx.auto-bind-dlq=true")
                        || !message.contains("mp.messaging.incoming.idempotency-test-no-dlx.dlx.declare=true")
                        || !message.contains(
                                "quarkus.idempotency.channels.\"idempotency-test-no-dlx\".require-dead-letter-exchange=false")
                        || !message.contains("mp.messaging.incoming.idempotency-test-requeue.failure-strategy=requeue")
                        || !message.contains("mp.messaging.incoming.idempotency-test-tagged.consumer-tag="
                                + "payments-consumer: after a reconnect")) {
                    throw new AssertionError("expected the three channels' problems and their remedies, got: " + message,
                            t);
                }
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("idempotency-test-no-dlx")
        @Idempotent
        void handle(String payload) {
        }

        @Incoming("idempotency-test-requeue")
        @Idempotent
        void requeue(String payload) {
        }

        @Incoming("idempotency-test-tagged")
        @Idempotent
        void tagged(String payload) {
        }
    }
}
