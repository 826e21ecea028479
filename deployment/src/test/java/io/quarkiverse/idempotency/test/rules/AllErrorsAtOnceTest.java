package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * Two broken methods: both errors are reported by one build.
 */
class AllErrorsAtOnceTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(Consumer.class))
            .overrideConfigKey("quarkus.devservices.enabled", "false")
            .overrideConfigKey("quarkus.idempotency.store", "memory")
            .assertException(t -> {
                List<Rule> broken = TestApps.rulesBroken(t);
                if (!broken.contains(Rule.INVALID_DURATION) || !broken.contains(Rule.EVENT_LOOP)) {
                    throw new AssertionError("expected both errors, found " + broken, t);
                }
            });

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("a")
        @Idempotent(retention = "-1h")
        public void first(String payload) {
        }

        @Incoming("b")
        @Idempotent
        public Uni<Void> second(Message<String> message) {
            return Uni.createFrom().completionStage(message::ack);
        }
    }
}
