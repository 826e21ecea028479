package io.quarkiverse.idempotency.test.store;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code asynchronous-commit} with the memory store is refused at startup: it has no commit to make durable later.
 */
class AsynchronousCommitOnMemoryStoreRefusedTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[] { "orders" }, new String[0], Orders.class)
            .overrideConfigKey("quarkus.idempotency.channels.orders.asynchronous-commit", "true")
            .assertException(t -> {
                String messages = TestApps.messages(t);
                assertTrue(messages.contains("quarkus.idempotency.channels.\"orders\".asynchronous-commit is true, but")
                        && messages.contains("store that cannot commit asynchronously"), messages);
            });

    @Test
    void refused() {
        fail("the application must not start");
    }

    @Singleton
    public static class Orders {

        @Incoming("orders")
        @Idempotent
        void handle(String order) {
        }
    }
}
