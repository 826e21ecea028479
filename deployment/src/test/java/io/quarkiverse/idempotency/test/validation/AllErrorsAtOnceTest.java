package io.quarkiverse.idempotency.test.validation;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.EventLoopException;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.InvalidDurationException;
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
                List<Class<?>> found = new ArrayList<>();
                collect(t, found);
                if (!found.contains(InvalidDurationException.class) || !found.contains(EventLoopException.class)) {
                    throw new AssertionError("expected both errors, found " + found, t);
                }
            });

    private static void collect(Throwable t, List<Class<?>> found) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof IdempotencyDefinitionException) {
                found.add(c.getClass());
            }
            for (Throwable s : c.getSuppressed()) {
                collect(s, found);
            }
        }
    }

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
        public Uni<Void> second(String payload) {
            return Uni.createFrom().voidItem();
        }
    }
}
