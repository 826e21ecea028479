package io.quarkiverse.idempotency.reactiveonly;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A {@code @Transactional} consumer in an application with only the reactive client: there is no JTA datasource whose
 * transaction its key could join (and no transaction manager to start one), so its key would never be written.
 * Refused by the build, saying what to do instead.
 */
class TransactionalWithoutJdbcTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveOnlyServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(Consumer.class,
                    ReactiveOnlyServices.class))
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    for (Throwable s : c.getSuppressed()) {
                        if (s instanceof IdempotencyDefinitionException e && e.rule() == Rule.TRANSACTIONAL_WITHOUT_JDBC
                                && e.getMessage().contains("@WithTransaction")) {
                            return;
                        }
                    }
                    if (c instanceof IdempotencyDefinitionException e && e.rule() == Rule.TRANSACTIONAL_WITHOUT_JDBC) {
                        return;
                    }
                }
                throw new AssertionError("expected " + Rule.TRANSACTIONAL_WITHOUT_JDBC, t);
            }));

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("transactional-payments")
        @Idempotent
        @Transactional
        void charge(String payment) {
        }
    }
}
