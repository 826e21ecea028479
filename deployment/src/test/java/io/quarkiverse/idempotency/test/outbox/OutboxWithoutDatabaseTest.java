package io.quarkiverse.idempotency.test.outbox;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** An outbox needs the JTA transaction of the keys' JDBC datasource: on the memory store the build fails. */
class OutboxWithoutDatabaseTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.failing(Rule.OUTBOX_WITHOUT_JDBC,
            "OutboxEmitter for channel receipts writes its messages in the sender's JTA transaction", Sender.class)
            .overrideConfigKey("mp.messaging.outgoing.receipts.connector", "smallrye-in-memory");

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Sender {

        @Inject
        @Channel("receipts")
        OutboxEmitter<String> receipts;
    }
}
