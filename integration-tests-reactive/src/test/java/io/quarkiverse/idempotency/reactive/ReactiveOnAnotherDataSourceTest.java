package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.fail;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A {@code @WithTransaction} consumer whose persistence unit is on another datasource than the idempotency keys would
 * write its keys in a table of their own, where a blocking consumer of the same key never looks: refused by the build.
 */
class ReactiveOnAnotherDataSourceTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(ReactivePaymentConsumer.class,
                    ReactiveCharge.class, OrderIdKey.class, Attempts.class))
            .withConfigurationResource("application.properties")
            .overrideConfigKey("quarkus.devservices.enabled", "false")
            .overrideConfigKey("quarkus.datasource.\"orders\".db-kind", "postgresql")
            .overrideConfigKey("quarkus.hibernate-orm.datasource", "orders")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    for (Throwable s : c.getSuppressed()) {
                        if (s instanceof IdempotencyDefinitionException e && e.rule() == Rule.REACTIVE_OTHER_DATASOURCE) {
                            return;
                        }
                    }
                    if (c instanceof IdempotencyDefinitionException e && e.rule() == Rule.REACTIVE_OTHER_DATASOURCE) {
                        return;
                    }
                }
                throw new AssertionError("expected " + Rule.REACTIVE_OTHER_DATASOURCE, t);
            });

    @Test
    void buildFails() {
        fail("the build must fail");
    }
}
