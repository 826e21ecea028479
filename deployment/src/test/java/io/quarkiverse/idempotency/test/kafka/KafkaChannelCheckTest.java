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
 * Kafka channels set up so that an offset could be committed past a record that was not handled, that hide rebalances
 * from the extension, or that would stop the channel while a record waits, retried in place, fail startup: every
 * problem at once, each with the property to change. A long attempt budget is fine: the connector no longer stops a
 * channel whose record waits.
 */
class KafkaChannelCheckTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(t -> {
        String message = TestApps.messages(t);
        for (String expected : List.of(
                "mp.messaging.incoming.ignoring.failure-strategy=ignore, so their outcomes are not mapped to"
                        + " Kafka (a failed record's offset would be committed past it",
                "Channel auto-committing has @Idempotent methods but enable.auto.commit=true",
                "mp.messaging.incoming.impatient.throttled.unprocessed-record-max-age.ms=60000",
                "mp.messaging.incoming.committing.commit-strategy=latest, which hides the rebalances",
                "mp.messaging.incoming.committing.idempotency.commit-strategy=latest instead",
                "mp.messaging.incoming.strict.fail-on-deserialization-failure=true: a record its deserializer cannot"
                        + " read would stop the channel",
                "mp.messaging.incoming.batching.batch=true: a batch has no outcome per record")) {
            if (!message.contains(expected)) {
                throw new AssertionError("expected '" + expected + "' in: " + message, t);
            }
        }
        for (String fine : List.of("fine", "patient")) {
            if (message.contains("Channel " + fine + " ") || message.contains("channel " + fine + " ")) {
                throw new AssertionError("the channel set up right was reported: " + message, t);
            }
        }
    }, Consumers.class)
            .overrideConfigKey("kafka.bootstrap.servers", "127.0.0.1:1")
            .overrideConfigKey("mp.messaging.incoming.ignoring.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.ignoring.failure-strategy", "ignore")
            .overrideConfigKey("mp.messaging.incoming.auto-committing.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.auto-committing.enable.auto.commit", "true")
            .overrideConfigKey("mp.messaging.incoming.patient.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.impatient.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.impatient.throttled.unprocessed-record-max-age.ms", "60000")
            .overrideConfigKey("mp.messaging.incoming.committing.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.committing.commit-strategy", "latest")
            .overrideConfigKey("mp.messaging.incoming.strict.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.strict.fail-on-deserialization-failure", "true")
            .overrideConfigKey("mp.messaging.incoming.batching.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.batching.batch", "true")
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

        @Incoming("impatient")
        @Idempotent
        void impatient(String payload) {
        }

        @Incoming("committing")
        @Idempotent
        void committing(String payload) {
        }

        @Incoming("strict")
        @Idempotent
        void strict(String payload) {
        }

        @Incoming("batching")
        @Idempotent
        void batching(String payload) {
        }

        // 1 + 2 + 4 + 8 s between five attempts (the defaults), at most 18 s with the jitter
        @Incoming("fine")
        @Idempotent
        void fine(String payload) {
        }
    }
}
