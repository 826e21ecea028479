package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * {@code asynchronous-commit} on a channel whose method confirms its key apart from its transaction (lease mode) is
 * refused at startup: its ack could not wait for the flush of a commit that holds the key.
 */
class AsynchronousCommitRefusedTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "leased" }, Leased.class, Charge.class)
            .overrideConfigKey("quarkus.idempotency.channels.leased.asynchronous-commit", "true")
            .assertException(t -> {
                String messages = TestApps.messages(t);
                assertTrue(messages.contains("quarkus.idempotency.channels.\"leased\".asynchronous-commit is true, but")
                        && messages.contains("does not write its key in its own transaction"), messages);
            });

    @Test
    void refused() {
        fail("the application must not start");
    }

    @Singleton
    public static class Leased {

        @Incoming("leased")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Blocking
        @Transactional
        void charge(String orderId) {
            Charge.of(orderId).persist();
        }
    }
}
