package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.common.annotation.RunOnVirtualThread;
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * On Kafka, a record retried in place holds the records of its partition behind it only if they are handled one at a
 * time: a method that runs records concurrently ({@code @Blocking(ordered = false)}, {@code @RunOnVirtualThread})
 * fails the build unless the throttled commit strategy orders them ({@code throttled.ordered=partition} or
 * {@code key}), naming the channel and the property to set.
 */
class UnorderedKafkaRecordsTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(t -> {
        TestApps.assertBroken(t, Rule.UNORDERED_RECORDS, "throttled.ordered=partition");
        String all = TestApps.messages(t);
        for (String expected : List.of("channel 'unordered'", "channel 'virtual'", "channel 'latest'",
                "channel 'misspelt'")) {
            if (!all.contains(expected)) {
                throw new AssertionError("expected '" + expected + "' among: " + all, t);
            }
        }
        if (all.contains("channel 'ordered'")) {
            throw new AssertionError("throttled.ordered=partition with the throttled strategy orders them: " + all, t);
        }
    }, Consumers.class)
            .overrideConfigKey("kafka.bootstrap.servers", "127.0.0.1:1")
            .overrideConfigKey("mp.messaging.incoming.unordered.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.virtual.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.latest.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.latest.throttled.ordered", "partition")
            .overrideConfigKey("mp.messaging.incoming.latest.idempotency.commit-strategy", "latest")
            .overrideConfigKey("mp.messaging.incoming.misspelt.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.misspelt.throttled.ordered", "partitions")
            .overrideConfigKey("mp.messaging.incoming.ordered.connector", "smallrye-kafka")
            .overrideConfigKey("mp.messaging.incoming.ordered.throttled.ordered", "partition");

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumers {

        @Incoming("unordered")
        @Idempotent
        @Blocking(ordered = false)
        void unordered(String payload) {
        }

        @Incoming("virtual")
        @Idempotent
        @RunOnVirtualThread
        void virtual(String payload) {
        }

        @Incoming("latest")
        @Idempotent
        @Blocking(ordered = false)
        void latest(String payload) {
        }

        @Incoming("misspelt")
        @Idempotent
        @Blocking(ordered = false)
        void misspelt(String payload) {
        }

        @Incoming("ordered")
        @Idempotent
        @Blocking(ordered = false)
        void ordered(String payload) {
        }
    }
}
