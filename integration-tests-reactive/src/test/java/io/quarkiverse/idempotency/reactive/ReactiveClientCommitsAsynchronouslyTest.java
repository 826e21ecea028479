package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.fail;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.test.QuarkusUnitTest;

/**
 * The database store over JDBC, with the reactive client for the methods on the event loop: their claims and confirms
 * commit over the client's connections, so those must commit durably by default too. With {@code synchronous_commit =
 * off} in the client's connection options (the JDBC ones are fine), startup fails, saying which connections.
 */
class ReactiveClientCommitsAsynchronouslyTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveApps.withServices(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(ReactiveCharge.class, ReactiveApps.class, ReactiveServices.class)
                    .addAsResource("db/migration/V1__charges.sql"))
            .overrideConfigKey("quarkus.datasource.reactive.additional-properties.options", "-c synchronous_commit=off")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
                    if (c.getMessage() != null && c.getMessage().contains("commit asynchronously by default")
                            && c.getMessage().contains("over the reactive PostgreSQL client")) {
                        return;
                    }
                }
                throw new AssertionError("expected the refusal of the reactive client's asynchronous commits", t);
            }));

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
