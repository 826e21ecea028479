package io.quarkiverse.idempotency.reactiveonly;

import static org.junit.jupiter.api.Assertions.fail;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.test.QuarkusUnitTest;

/**
 * The reactive client's connections committing asynchronously by default ({@code synchronous_commit = off} in their
 * startup options, as a server, database or role setting would make it too): a message would be acked on a commit that
 * a crash of PostgreSQL can lose. Startup fails, as it does over JDBC, naming where the setting comes from.
 */
class ReactiveOnlySynchronousCommitOffTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveOnlyServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(ReactiveOnlyServices.class))
            .overrideConfigKey("quarkus.datasource.reactive.additional-properties.options", "-c synchronous_commit=off")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c.getMessage() != null
                            && c.getMessage().contains("connections commit asynchronously by default")
                            && c.getMessage().contains("set by client")) {
                        return;
                    }
                }
                throw new AssertionError("expected the refusal of synchronous_commit = off", t);
            }));

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
