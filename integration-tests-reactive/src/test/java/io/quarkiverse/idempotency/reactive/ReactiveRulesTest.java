package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Uni;

/**
 * The shapes of a {@code @WithTransaction} consumer that cannot keep the guarantees, each refused by the build with its
 * own rule: one build reports them all.
 */
class ReactiveRulesTest {

    private static final List<Rule> EXPECTED = List.of(Rule.REACTIVE_AND_JTA, Rule.REACTIVE_BLOCKING,
            Rule.REACTIVE_SHAPE, Rule.REACTIVE_LEASE);

    @RegisterExtension
    static final QuarkusUnitTest APP = new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(Consumers.class))
            .overrideConfigKey("quarkus.devservices.enabled", "false")
            .assertException(t -> {
                List<Rule> broken = rulesBroken(t);
                if (!broken.containsAll(EXPECTED) || broken.size() != EXPECTED.size()) {
                    throw new AssertionError("expected exactly " + EXPECTED + ", found " + broken, t);
                }
            });

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    private static List<Rule> rulesBroken(Throwable t) {
        List<Rule> found = new ArrayList<>();
        collect(t, found);
        return found;
    }

    private static void collect(Throwable t, List<Rule> found) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof IdempotencyDefinitionException e && !found.contains(e.rule())) {
                found.add(e.rule());
            }
            for (Throwable s : c.getSuppressed()) {
                collect(s, found);
            }
        }
    }

    @ApplicationScoped
    public static class Consumers {

        @Incoming("both")
        @Idempotent
        @WithTransaction
        @Transactional
        public Uni<Void> bothTransactions(String payload) {
            return Uni.createFrom().voidItem();
        }

        @Incoming("blocking")
        @Idempotent
        @WithTransaction
        @Blocking
        public Uni<Void> blocking(String payload) {
            return Uni.createFrom().voidItem();
        }

        @Incoming("message")
        @Idempotent
        @WithTransaction
        public Uni<Void> message(Message<String> message) {
            return Uni.createFrom().completionStage(message.ack());
        }

        @Incoming("lease")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @WithTransaction
        public Uni<Void> lease(String payload) {
            return Uni.createFrom().voidItem();
        }
    }
}
