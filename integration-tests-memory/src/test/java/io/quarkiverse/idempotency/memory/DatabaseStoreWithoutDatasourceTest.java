package io.quarkiverse.idempotency.memory;

import static org.junit.jupiter.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

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
 * The database store selected in an application without any datasource (no JDBC driver, no Hibernate, no reactive
 * client) fails the build and names the remedy.
 */
class DatabaseStoreWithoutDatasourceTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(Consumer.class))
            .overrideConfigKey("quarkus.idempotency.store", "database")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    for (Throwable s : c.getSuppressed()) {
                        if (broken(s)) {
                            return;
                        }
                    }
                    if (broken(c)) {
                        return;
                    }
                }
                throw new AssertionError("expected rule DATABASE_WITHOUT_DATASOURCE broken, naming the remedy", t);
            });

    private static boolean broken(Throwable t) {
        return t instanceof IdempotencyDefinitionException e && e.rule() == Rule.DATABASE_WITHOUT_DATASOURCE
                && e.getMessage().contains("quarkus.idempotency.store=database requires a PostgreSQL datasource"
                        + " [quarkus.idempotency.store]; add quarkus-jdbc-postgresql (with Hibernate ORM or without");
    }

    @Test
    void buildFails() {
        fail("the build must fail");
    }

    @ApplicationScoped
    public static class Consumer {
        @Incoming("in")
        @Idempotent
        void handle(String payload) {
        }
    }
}
