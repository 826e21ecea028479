package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.inject.Singleton;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.test.support.DelegatingStore;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A store of the application's own that may commit asynchronously, but does not say whether a confirmed key's commit
 * is durable (a wrapper written before that method existed, say), fails the build: the interface's default would
 * answer true without looking, and a message could be acked on a commit a crash then lost.
 */
class AsynchronousStoreWithoutDurableConfirmTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], WrappingStore.class, DelegatingStore.class)
            .assertException(t -> TestApps.assertBroken(t, Rule.STORE_WITHOUT_DURABLE_CONFIRM,
                    "class=" + WrappingStore.class.getName()));

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @Singleton
    public static class WrappingStore extends DelegatingStore {

        @Override
        public boolean commitsAsynchronously() {
            return true;
        }

        @Override
        public void awaitDurable() {
        }
    }
}
