package io.quarkiverse.idempotency.test.rules;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
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
 * A method on the event loop with the database store, in an application without the reactive PostgreSQL client: its
 * store calls would block the event loop, so the build fails and names the client to add.
 */
class EventLoopStoreTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(Consumer.class, TestApps.class))
            .overrideConfigKey("quarkus.devservices.enabled", "false")
            .overrideConfigKey("quarkus.idempotency.store", "database")
            .overrideConfigKey("quarkus.datasource.db-kind", "postgresql")
            .assertException(t -> TestApps.assertBroken(t, Rule.EVENT_LOOP_STORE, "quarkus-reactive-pg-client"));

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent
        public Uni<Void> handle(String payload) {
            return Uni.createFrom().voidItem();
        }
    }
}
