package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.concurrent.CompletionStage;

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
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * On Kafka, a busy, failed or unstored record is retried in place, inside the method's invocation: the build refuses
 * the methods whose invocation does not end with one record's outcome (a batch, a Message they settle themselves, a
 * processor whose output is acknowledged later), each with the reason, in one report.
 */
class KafkaSignaturesTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(t -> {
        TestApps.assertBroken(t, Rule.ONE_RECORD_AT_A_TIME, "consumes Kafka channel");
        String all = TestApps.messages(t);
        for (String expected : List.of("channel 'batch' and consumes a batch of records",
                "channel 'message' and takes the Message", "channel 'processor' and produces a message")) {
            if (!all.contains(expected)) {
                throw new AssertionError("expected '" + expected + "' among: " + all, t);
            }
        }
    }, Consumers.class)
            .overrideConfigKey("kafka.bootstrap.servers", "127.0.0.1:1")
            .overrideConfigKey("mp.messaging.incoming.batch.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.message.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.processor.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.outgoing.out.connector", "smallrye-kafka");

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumers {

        @Incoming("batch")
        @Idempotent
        void batch(List<String> payloads) {
        }

        @Incoming("message")
        @Idempotent
        @Blocking
        CompletionStage<Void> message(Message<String> message) {
            return message.ack();
        }

        @Incoming("processor")
        @Outgoing("out")
        @Idempotent
        String processor(String payload) {
            return payload;
        }
    }
}
