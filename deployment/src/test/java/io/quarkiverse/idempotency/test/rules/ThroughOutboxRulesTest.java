package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ThroughOutbox;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A {@code @Transactional} processor is refused unless its output goes through the outbox, and {@code @ThroughOutbox}
 * only where the outbox can write the output in the method's transaction: each misplacement is reported, all in one
 * build, with the remedy.
 */
class ThroughOutboxRulesTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps
            .postgres(new String[] { "plain", "untransacted", "no-outgoing", "message", "not-idempotent", "mandatory",
                    "nothing" },
                    Processors.class)
            .overrideConfigKey("mp.messaging.outgoing.plain-out.connector", "smallrye-in-memory")
            .overrideConfigKey("mp.messaging.outgoing.untransacted-out.connector", "smallrye-in-memory")
            .overrideConfigKey("mp.messaging.outgoing.message-out.connector", "smallrye-in-memory")
            .overrideConfigKey("mp.messaging.outgoing.not-idempotent-out.connector", "smallrye-in-memory")
            .overrideConfigKey("mp.messaging.outgoing.mandatory-out.connector", "smallrye-in-memory")
            .overrideConfigKey("mp.messaging.outgoing.nothing-out.connector", "smallrye-in-memory")
            .assertException(t -> {
                TestApps.assertBroken(t, Rule.TRANSACTIONAL_PROCESSOR, "add @ThroughOutbox");
                TestApps.assertBroken(t, Rule.OUTBOX_OUTPUT_SHAPE, "method=untransacted");
                TestApps.assertBroken(t, Rule.OUTBOX_OUTPUT_SHAPE, "method=noOutgoing");
                TestApps.assertBroken(t, Rule.OUTBOX_OUTPUT_SHAPE, "method=returnsMessage");
                TestApps.assertBroken(t, Rule.OUTBOX_OUTPUT_NOT_IDEMPOTENT, "method=notIdempotent");
                TestApps.assertBroken(t, Rule.OUTBOX_OUTPUT_SHAPE, "method=mandatory");
                TestApps.assertBroken(t, Rule.OUTBOX_OUTPUT_SHAPE, "method=returnsVoid");
                List<Rule> broken = TestApps.rulesBroken(t);
                if (broken.size() != 7) {
                    throw new AssertionError("expected exactly these seven errors, found " + broken, t);
                }
            });

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Processors {

        @Incoming("plain")
        @Outgoing("plain-out")
        @Idempotent
        @Transactional
        public String plain(String payload) {
            return payload;
        }

        @Incoming("untransacted")
        @Outgoing("untransacted-out")
        @ThroughOutbox
        @Idempotent
        public String untransacted(String payload) {
            return payload;
        }

        @Incoming("no-outgoing")
        @ThroughOutbox
        @Idempotent
        @Transactional
        public void noOutgoing(String payload) {
        }

        @Incoming("message")
        @Outgoing("message-out")
        @ThroughOutbox
        @Idempotent
        @Transactional
        public Message<String> returnsMessage(String payload) {
            return Message.of(payload);
        }

        // SmallRye calls it without a transaction: MANDATORY would fail every message
        @Incoming("mandatory")
        @Outgoing("mandatory-out")
        @ThroughOutbox
        @Idempotent
        @Transactional(Transactional.TxType.MANDATORY)
        public String mandatory(String payload) {
            return payload;
        }

        @Incoming("nothing")
        @Outgoing("nothing-out")
        @ThroughOutbox
        @Idempotent
        @Transactional
        public Void returnsVoid(String payload) {
            return null;
        }

        @Incoming("not-idempotent")
        @Outgoing("not-idempotent-out")
        @ThroughOutbox
        @Transactional
        public String notIdempotent(String payload) {
            return payload;
        }
    }
}
