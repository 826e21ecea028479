package io.quarkiverse.idempotency.test.kafka;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Kafka channels set up so that an offset could be committed past a record that was not handled, or whose retries
 * outlast what the connector tolerates, fail startup: every problem at once, each with the property to change.
 */
class KafkaChannelCheckTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(t -> {
        String message = TestApps.messages(t);
        for (String expected : List.of(
                "mp.messaging.incoming.ignoring.failure-strategy=ignore, so their outcomes are not mapped to"
                        + " Kafka (a failed record's offset would be committed past it",
                "Channel auto-committing has @Idempotent methods but enable.auto.commit=true",
                "retries a failed record of channel patient in place for up to",
                "throttled.unprocessed-record-max-age.ms=60000")) {
            if (!message.contains(expected)) {
                throw new AssertionError("expected '" + expected + "' in: " + message, t);
            }
        }
        if (message.contains("Channel fine") || message.contains("channel fine ")) {
            throw new AssertionError("the channel set up right was reported: " + message, t);
        }
    }, Consumers.class)
            .overrideConfigKey("kafka.bootstrap.servers", "127.0.0.1:1")
            .overrideConfigKey("mp.messaging.incoming.ignoring.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.ignoring.failure-strategy", "ignore")
            .overrideConfigKey("mp.messaging.incoming.auto-committing.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.auto-committing.enable.auto.commit", "true")
            .overrideConfigKey("mp.messaging.incoming.patient.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.fine.connector", "smallrye-kafka");

    @Test
    void startupFails() {
        fail("startup must fail");
    }

    @ApplicationScoped
    public static class Consumers {

        @Incoming("ignoring")
        @Idempotent
        void ignoring(String payload) {
        }

        @Incoming("auto-committing")
        @Idempotent
        void autoCommitting(String payload) {
        }

        // 1 + 2 + 4 + 8 + 16 + 32 + 60 + 60 + 60 s between ten attempts
        @Incoming("patient")
        @Idempotent(maxAttempts = 10)
        void patient(String payload) {
        }

        // 1 + 2 + 4 + 8 s between five attempts (the defaults), at most 18 s with the jitter
        @Incoming("fine")
        @Idempotent
        void fine(String payload) {
        }
    }
}
